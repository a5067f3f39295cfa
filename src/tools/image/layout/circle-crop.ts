import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { getSharp } from '../../../engines/sharp.js';
import { colorSchema, parseColor, svgPaint } from '../../_shared/color.js';
import { loadUpright } from '../_shared/layout.js';
import { outputFile } from '../../_shared/output.js';

export default defineTool({
  id: 'circle-crop',
  section: 'image',
  group: 'layout',
  summary: 'Crop an image to a circle with zoom, offset and optional border.',
  description:
    'The circle has the diameter of the shorter side divided by zoom, centred at (offsetX, offsetY) as fractions of the image ' +
    '(moved inwards when it would leave the image). borderWidth draws a ring inside the edge. Corners are transparent or the background colour.',
  input: { kind: 'file', accept: ['image/*'] },
  frames: 'first',
  settings: z.object({
    zoom: z.number().min(1).max(5).default(1).describe('Zoom factor.'),
    offsetX: z.number().min(0).max(1).default(0.5).describe('Horizontal center (fraction of the width).'),
    offsetY: z.number().min(0).max(1).default(0.5).describe('Vertical center (fraction of the height).'),
    borderWidth: z.int().min(0).max(200).default(0).describe('Ring width in pixels.'),
    borderColor: colorSchema('#ffffff').describe('Ring color.'),
    background: colorSchema('transparent').describe("Corner fill: 'transparent' or a hex color."),
    outputSize: z.int().min(16).max(4096).optional().describe('Final square size in pixels (default: the circle diameter).'),
  }),
  output: 'PNG image',
  examples: [
    'portrait.jpg -o avatar.png',
    'portrait.jpg --zoom 1.5 --offset-y 0.35 --border-width 8 --border-color "#3366ff" --output-size 512 -o avatar.png',
  ],
  async run(ctx, { files }, s) {
    const src = await loadUpright(files[0]!, ctx.workDir);
    const sharp = await getSharp();
    const d = Math.max(1, Math.floor(Math.min(src.width, src.height) / s.zoom));
    const clamp = (v: number, max: number) => Math.max(0, Math.min(max, v));
    const left = Math.round(clamp(s.offsetX * src.width - d / 2, src.width - d));
    const top = Math.round(clamp(s.offsetY * src.height - d / 2, src.height - d));
    const size = s.outputSize ?? Math.min(d, 4096);
    const square = await sharp(src.buffer).extract({ left, top, width: d, height: d }).resize(size, size).ensureAlpha().png().toBuffer();
    const r = size / 2;
    const bw = Math.min(s.borderWidth, r);
    const mask = Buffer.from(
      `<svg xmlns="http://www.w3.org/2000/svg" width="${size}" height="${size}"><circle cx="${r}" cy="${r}" r="${r}" fill="#fff"/></svg>`,
    );
    const layers: { input: Buffer; blend?: 'dest-in' | 'over' | 'dest-over' }[] = [{ input: mask, blend: 'dest-in' }];
    if (bw > 0) {
      const ring = `<svg xmlns="http://www.w3.org/2000/svg" width="${size}" height="${size}"><circle cx="${r}" cy="${r}" r="${r - bw / 2}" fill="none" stroke-width="${bw}" ${svgPaint(s.borderColor, 'stroke')}/></svg>`;
      layers.push({ input: Buffer.from(ring), blend: 'over' });
    }
    const bg = parseColor(s.background);
    if (bg.alpha > 0) {
      const fill = `<svg xmlns="http://www.w3.org/2000/svg" width="${size}" height="${size}"><rect width="${size}" height="${size}" ${svgPaint(bg)}/></svg>`;
      layers.push({ input: Buffer.from(fill), blend: 'dest-over' });
    }
    const out = ctx.out('png', '-circle');
    await sharp(square).composite(layers).png().toFile(out);
    return { outputs: [outputFile(out)], data: { size, diameterInSource: d, crop: { left, top, width: d, height: d } } };
  },
});
