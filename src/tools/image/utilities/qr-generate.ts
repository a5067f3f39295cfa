import { writeFile } from 'node:fs/promises';
import { z } from 'zod';
import { KilnError } from '../../../core/errors.js';
import { defineTool } from '../../../core/tool.js';
import { getSharp } from '../../../engines/sharp.js';
import { colorSchema, parseColor } from '../../_shared/color.js';
import { outputFile } from '../../_shared/output.js';
import { logoModules, qrSvg } from '../_shared/qr-svg.js';
import { openInput } from '../_shared/decode.js';

/** Share of the symbol width the logo may cover: level H restores up to 30 % of codewords, so stay well under. */
const LOGO_FRACTION = 0.22;

export default defineTool({
  id: 'qr-generate',
  section: 'image',
  group: 'utilities',
  summary: 'Generate a styled QR code, optionally with a center logo.',
  description:
    'Encodes data as a QR code drawn as vector shapes (square, rounded or dot modules; square, rounded or dot corner eyes) and ' +
    'rendered to PNG. An optional logo is centred on a light pad; error correction is raised to H so the code still reads.',
  input: {
    kind: 'none',
    extra: [{ field: 'logo', accept: ['image/*'], required: false, description: 'Logo placed in the center of the code' }],
  },
  frames: 'first',
  settings: z.object({
    data: z.string().min(1).max(2000).describe('Content to encode.'),
    size: z.int().min(100).max(10000).default(400).describe('Output width/height in pixels.'),
    margin: z.int().min(0).max(20).default(2).describe('Quiet zone in modules.'),
    colorDark: colorSchema('#000000').describe('Module (foreground) color.'),
    colorLight: colorSchema('#FFFFFF').describe('Background color.'),
    errorCorrectionLevel: z.enum(['L', 'M', 'Q', 'H']).default('M').describe('Error correction; forced to H when a logo is supplied.'),
    dotStyle: z.enum(['square', 'rounded', 'dots']).default('square').describe('Module shape.'),
    cornerStyle: z.enum(['square', 'rounded', 'dot']).default('square').describe('Finder-pattern (corner) shape.'),
  }),
  output: 'PNG image',
  examples: ['--data "https://example.com" -o qr.png', '--data "hello" --dot-style dots --corner-style rounded --logo logo.png -o qr.png'],
  async run(ctx, { extra }, s) {
    const logo = extra.logo?.[0];
    const level = logo ? 'H' : s.errorCorrectionLevel;
    const QRCode = (await import('qrcode')).default;
    let qr: ReturnType<typeof QRCode.create>;
    try {
      qr = QRCode.create(s.data, { errorCorrectionLevel: level });
    } catch (e) {
      throw new KilnError('VALIDATION_ERROR', `The data does not fit in a QR code at error correction ${level}: ${(e as Error).message}`);
    }
    const m = qr.modules;
    const matrix = { size: m.size, get: (x: number, y: number) => !!m.data[y * m.size + x] };
    const modulesAcross = m.size + 2 * s.margin;
    if (s.size < modulesAcross)
      throw new KilnError(
        'VALIDATION_ERROR',
        `size ${s.size} is smaller than the ${modulesAcross} modules of this code; use at least ${modulesAcross * 2}.`,
      );
    const logoFraction = logo ? LOGO_FRACTION : 0;
    const svg = qrSvg(matrix, {
      size: s.size,
      margin: s.margin,
      colorDark: s.colorDark,
      colorLight: s.colorLight,
      dotStyle: s.dotStyle,
      cornerStyle: s.cornerStyle,
      logoFraction,
    });
    const sharp = await getSharp();
    ctx.progress(40, 'drawing');
    let img = sharp(Buffer.from(svg), { density: 72 });
    if (logo) {
      const unit = s.size / modulesAcross;
      // The cleared square is whole modules; the logo sits inside it with a one-module light border.
      const cleared = logoModules(m.size, LOGO_FRACTION) * unit;
      const box = Math.max(1, Math.floor(cleared - 2 * unit));
      const bg = parseColor(s.colorLight);
      const logoPng = await (await openInput(logo, ctx.workDir, ctx.signal))
        .resize(box, box, { fit: 'contain', background: { ...bg, alpha: bg.alpha } })
        .png()
        .toBuffer();
      const pos = Math.round((s.size - box) / 2);
      img = sharp(await img.png().toBuffer()).composite([{ input: logoPng, left: pos, top: pos }]);
    }
    const out = ctx.out('png', '', 'qr-code');
    await writeFile(out, await img.png().toBuffer());
    return { outputs: [outputFile(out)], data: { version: qr.version, modules: m.size, errorCorrectionLevel: level, logo: !!logo } };
  },
});
