import { writeFile } from 'node:fs/promises';
import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { getSharp } from '../../../engines/sharp.js';
import { writeIco } from '../_shared/ico.js';
import { colorSchema, hexOf, parseColor } from '../../_shared/color.js';
import { outputFile } from '../../_shared/output.js';
import { openInput } from '../_shared/decode.js';

const PNGS: { name: string; size: number }[] = [
  ...[16, 32, 48, 64, 96, 128, 256].map((size) => ({ name: `favicon-${size}x${size}.png`, size })),
  { name: 'apple-touch-icon.png', size: 180 },
  { name: 'android-chrome-192x192.png', size: 192 },
  { name: 'android-chrome-512x512.png', size: 512 },
];
const ICO_SIZES = [16, 32, 48, 256];

export default defineTool({
  id: 'favicon',
  section: 'image',
  group: 'optimization',
  summary: 'Generate every standard favicon and app-icon size from one image.',
  description:
    'The image is fitted into a square (transparent, or backgroundColor), with padding percent around it and corners rounded by borderRadius percent (50 = circle). ' +
    'The ZIP holds favicon PNGs 16-256, apple-touch-icon (180, always opaque as iOS needs), android-chrome 192 and 512, a multi-size favicon.ico (16, 32, 48, 256), site.webmanifest and an HTML snippet.',
  input: { kind: 'file', accept: ['image/*'] },
  frames: 'first',
  settings: z.object({
    padding: z.int().min(0).max(40).default(0).describe('Padding around the icon content in percent.'),
    backgroundColor: colorSchema().optional().describe('Flatten onto this background color; transparent when omitted.'),
    borderRadius: z.int().min(0).max(50).default(0).describe('Corner radius for rounded icons in percent.'),
  }),
  output: 'ZIP of PNG icons, favicon.ico, site.webmanifest and head.html',
  examples: ['logo.svg --padding 10 --background-color "#ffffff" --border-radius 20 -o icons.zip'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const sharp = await getSharp();
    const src = await (await openInput(input, ctx.workDir, undefined, { density: 300 })).autoOrient().png().toBuffer();
    const bg = s.backgroundColor ? parseColor(s.backgroundColor) : { r: 0, g: 0, b: 0, alpha: 0 };
    const render = async (size: number, opaque = false): Promise<Buffer> => {
      const inner = Math.max(1, Math.round(size * (1 - (2 * s.padding) / 100)));
      const fill = opaque && bg.alpha < 1 ? { r: 255, g: 255, b: 255, alpha: 1 } : bg;
      const content = await sharp(src)
        .resize(inner, inner, { fit: 'contain', background: { r: 0, g: 0, b: 0, alpha: 0 } })
        .png()
        .toBuffer();
      let img = sharp({ create: { width: size, height: size, channels: 4, background: fill } }).composite([
        { input: content, gravity: 'center' },
      ]);
      if (s.borderRadius > 0) {
        const r = (size * s.borderRadius) / 100;
        const mask = Buffer.from(
          `<svg xmlns="http://www.w3.org/2000/svg" width="${size}" height="${size}"><rect width="${size}" height="${size}" rx="${r}" ry="${r}"/></svg>`,
        );
        img = sharp(await img.png().toBuffer()).composite([{ input: mask, blend: 'dest-in' }]);
      }
      // iOS shows transparency as black: the touch icon is flattened, rounded corners included.
      if (opaque)
        img = sharp(await img.png().toBuffer()).flatten({ background: fill.alpha < 1 ? '#ffffff' : { r: fill.r, g: fill.g, b: fill.b } });
      return img.png({ compressionLevel: 9 }).toBuffer();
    };
    const outputs = [];
    for (const [i, p] of PNGS.entries()) {
      const path = ctx.out('png', '', p.name.replace(/\.png$/, ''));
      await writeFile(path, await render(p.size, p.name === 'apple-touch-icon.png'));
      outputs.push(outputFile(path));
      ctx.progress(5 + (70 * (i + 1)) / PNGS.length, 'icons');
    }
    const ico = await Promise.all(
      ICO_SIZES.map(async (size) => {
        const png = await render(size);
        const rgba = await sharp(png).ensureAlpha().raw().toBuffer();
        return { size, rgba, ...(size >= 256 ? { png } : {}) };
      }),
    );
    const icoPath = ctx.out('ico', '', 'favicon');
    await writeFile(icoPath, writeIco(ico));
    outputs.push(outputFile(icoPath, { contentType: 'image/x-icon' }));
    // A manifest colour is #rrggbb whatever spelling the setting used (rgb(), a name); a transparent
    // background has none, so the default white stands in.
    const manifestColor = bg.alpha > 0 ? hexOf(bg) : '#ffffff';
    const manifest = {
      name: '',
      short_name: '',
      icons: [
        { src: '/android-chrome-192x192.png', sizes: '192x192', type: 'image/png' },
        { src: '/android-chrome-512x512.png', sizes: '512x512', type: 'image/png' },
      ],
      theme_color: manifestColor,
      background_color: manifestColor,
      display: 'standalone',
    };
    const manifestPath = ctx.out('webmanifest', '', 'site');
    await writeFile(manifestPath, JSON.stringify(manifest, null, 2) + '\n');
    outputs.push(outputFile(manifestPath, { contentType: 'application/manifest+json' }));
    const htmlPath = ctx.out('html', '', 'head');
    await writeFile(
      htmlPath,
      [
        '<link rel="icon" href="/favicon.ico" sizes="any">',
        '<link rel="icon" type="image/png" sizes="32x32" href="/favicon-32x32.png">',
        '<link rel="icon" type="image/png" sizes="16x16" href="/favicon-16x16.png">',
        '<link rel="apple-touch-icon" sizes="180x180" href="/apple-touch-icon.png">',
        '<link rel="manifest" href="/site.webmanifest">',
        '',
      ].join('\n'),
    );
    outputs.push(outputFile(htmlPath));
    return { outputs, data: { files: outputs.map((o) => o.name), icoSizes: ICO_SIZES } };
  },
});
