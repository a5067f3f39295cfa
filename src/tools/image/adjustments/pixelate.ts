import { z } from 'zod';
import { KilnError } from '../../../core/errors.js';
import { defineTool } from '../../../core/tool.js';
import { outputFormat, readRgba, writeRaw } from '../_shared/pixels.js';

export default defineTool({
  id: 'pixelate',
  section: 'image',
  group: 'adjustments',
  summary: 'Pixelate the whole image or one rectangular region.',
  description:
    'Each blockSize×blockSize block (aligned to the region’s top-left corner) becomes the mean of its pixels. region is clipped to the image.',
  input: { kind: 'file', accept: ['image/*'] },
  frames: 'first',
  settings: z.object({
    blockSize: z.int().min(2).max(128).default(12).describe('Pixel block size.'),
    region: z
      .object({ left: z.int().min(0), top: z.int().min(0), width: z.int().min(1), height: z.int().min(1) })
      .strict()
      .optional()
      .describe('Optional rectangle {left, top, width, height} in pixels; whole image when omitted.'),
  }),
  output: 'image in the input format',
  examples: ['photo.jpg --block-size 20', 'photo.jpg --region \'{"left":10,"top":10,"width":100,"height":50}\''],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const raw = await readRgba(input, ctx.workDir);
    const { width: W, height: H, data: d } = raw;
    const r = s.region ?? { left: 0, top: 0, width: W, height: H };
    const x0 = r.left;
    const y0 = r.top;
    const x1 = Math.min(W, r.left + r.width);
    const y1 = Math.min(H, r.top + r.height);
    if (x0 >= W || y0 >= H)
      throw new KilnError('VALIDATION_ERROR', `region starts outside the ${W}×${H} image.`, {
        details: [{ path: 'region', message: 'outside the image' }],
      });
    const B = s.blockSize;
    for (let by = y0; by < y1; by += B) {
      const ey = Math.min(y1, by + B);
      for (let bx = x0; bx < x1; bx += B) {
        const ex = Math.min(x1, bx + B);
        let sr = 0,
          sg = 0,
          sb = 0,
          sa = 0;
        for (let y = by; y < ey; y++)
          for (let x = bx, i = (y * W + bx) * 4; x < ex; x++, i += 4) {
            // Colours weighted by their alpha: the hidden colour of transparent pixels (black, mostly)
            // would otherwise darken the block's visible part, a dark fringe around every cut-out.
            const a = d[i + 3]!;
            sr += d[i]! * a;
            sg += d[i + 1]! * a;
            sb += d[i + 2]! * a;
            sa += a;
          }
        const n = (ey - by) * (ex - bx);
        const w = sa || 1;
        const mr = sr / w,
          mg = sg / w,
          mb = sb / w,
          ma = sa / n;
        for (let y = by; y < ey; y++)
          for (let x = bx, i = (y * W + bx) * 4; x < ex; x++, i += 4) {
            d[i] = mr;
            d[i + 1] = mg;
            d[i + 2] = mb;
            d[i + 3] = ma;
          }
      }
    }
    return {
      outputs: [await writeRaw(ctx, raw, outputFormat(input))],
      data: { region: { left: x0, top: y0, width: x1 - x0, height: y1 - y0 }, blockSize: B },
    };
  },
});
