import path from 'node:path';
import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { getSharp } from '../../../engines/sharp.js';
import { readWithZbar, readWithZxing, type DecodedCode } from '../../../engines/zxing.js';
import { openInput } from '../_shared/decode.js';

/** zxing works on pixels; very large photos are scaled down first (codes stay far above its minimum size). */
const MAX_SIDE = 4096;

export default defineTool({
  id: 'barcode-read',
  section: 'image',
  group: 'utilities',
  summary: 'Detect and decode QR, EAN, Code128, DataMatrix and other codes in an image.',
  description:
    'Finds every code in the image with zxing (QR, Micro QR, EAN-13/8, UPC-A/E, Code128, Code39, Code93, ITF, Codabar, DataBar, ' +
    'DataMatrix, PDF417, Aztec, MaxiCode); zbarimg is asked as well when zxing finds nothing. Returns each code with its format, text and corner points.',
  input: { kind: 'file', accept: ['image/*'] },
  frames: 'first',
  settings: z.object({}),
  output: 'JSON: codes [{format, text, position}]',
  examples: ['label.png --json'],
  async run(ctx, { files }) {
    const input = files[0]!;
    const img = await openInput(input, ctx.workDir, ctx.signal);
    const meta = await img.metadata();
    img.autoOrient();
    const rotated = (meta.orientation ?? 1) >= 5;
    const w = rotated ? meta.height! : meta.width!;
    const h = rotated ? meta.width! : meta.height!;
    const scale = Math.min(1, MAX_SIDE / Math.max(w, h));
    if (scale < 1) img.resize(Math.round(w * scale), Math.round(h * scale));
    // Transparent areas become white, as on paper: dark codes drawn on alpha would otherwise vanish.
    const { data, info } = await img.flatten({ background: '#ffffff' }).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    ctx.progress(30, 'decoding');
    let codes: DecodedCode[] = await readWithZxing({ data, width: info.width, height: info.height });
    if (scale < 1) codes = codes.map((c) => ({ ...c, position: scalePosition(c.position, 1 / scale) }));
    if (codes.length === 0) {
      ctx.progress(60, 'zbar');
      // zbarimg decodes through ImageMagick, which would read an SVG's external references or hand
      // PostScript to Ghostscript by itself: it gets the pixels sharp already decoded, never the upload.
      const png = path.join(ctx.workDir, 'zbar-input.png');
      await (await getSharp())(data, { raw: { width: info.width, height: info.height, channels: 4 } })
        .png()
        .toFile(png);
      codes = await readWithZbar(png, { width: w, height: h }, ctx.signal);
    }
    return {
      outputs: [],
      data: {
        count: codes.length,
        codes: codes.map((c) => ({ format: c.format, text: c.text, position: c.position, engine: c.engine })),
        width: w,
        height: h,
      },
    };
  },
});

function scalePosition(p: DecodedCode['position'], k: number): DecodedCode['position'] {
  const s = (q: { x: number; y: number }) => ({ x: Math.round(q.x * k), y: Math.round(q.y * k) });
  return { topLeft: s(p.topLeft), topRight: s(p.topRight), bottomRight: s(p.bottomRight), bottomLeft: s(p.bottomLeft) };
}
