import { z } from 'zod';
import { KilnError } from '../../../core/errors.js';
import { defineTool } from '../../../core/tool.js';
import { inputMetadata, sameFormatAs, visibleSize, writeImage } from '../../../engines/sharp.js';
import { outputFile } from '../../_shared/output.js';
import { openInput } from '../_shared/decode.js';
import { dropsFrames, keepsFrames } from '../_shared/frames.js';

export default defineTool({
  id: 'crop',
  section: 'image',
  group: 'essentials',
  summary: 'Cut a rectangular region out of an image, in pixels or percent.',
  description:
    'left/top/width/height describe the region in the image as it is displayed (EXIF orientation applied), in pixels or in percent of the width and height. ' +
    'A region reaching outside the image is refused with the image size in the message. Animated GIF and WebP stay animated (every frame is cropped), a multi-page TIFF keeps its pages.',
  input: { kind: 'file', accept: ['image/*'], inMemory: true },
  frames: dropsFrames,
  settings: z.object({
    left: z.number().min(0).describe("X offset of the crop region (unit per 'unit')."),
    top: z.number().min(0).describe('Y offset of the crop region.'),
    width: z.number().gt(0).describe('Width of the crop region.'),
    height: z.number().gt(0).describe('Height of the crop region.'),
    unit: z.enum(['px', 'percent']).default('px').describe('Unit of left/top/width/height.'),
  }),
  check: (s) => {
    if (s.unit === 'percent' && (s.left + s.width > 100.0001 || s.top + s.height > 100.0001))
      return 'With unit percent, left+width and top+height must be at most 100.';
  },
  output: 'image in the input format',
  examples: [
    'photo.jpg --left 10 --top 10 --width 200 --height 100 -o part.jpg',
    'photo.jpg --unit percent --left 25 --top 25 --width 50 --height 50',
  ],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const ext = input.type?.ext;
    // Animated GIF/WebP and a multi-page TIFF keep every frame or page (sharp works on the whole strip).
    const animated = await keepsFrames(input);
    const img = await openInput(input, ctx.workDir, ctx.signal, { animated });
    const meta = await inputMetadata(img);
    const { width: W, height: H } = visibleSize(meta);
    if ((meta.orientation ?? 1) > 1) img.autoOrient();
    const px = (v: number, total: number) => (s.unit === 'percent' ? (v * total) / 100 : v);
    const left = Math.round(px(s.left, W));
    const top = Math.round(px(s.top, H));
    const width = Math.max(1, Math.round(px(s.width, W)));
    const height = Math.max(1, Math.round(px(s.height, H)));
    if (left + width > W || top + height > H) {
      throw new KilnError(
        'VALIDATION_ERROR',
        `The crop region (left ${left}, top ${top}, ${width}×${height} px) lies outside the image, which is ${W}×${H} px.`,
        { details: { imageWidth: W, imageHeight: H, left, top, width, height } },
      );
    }
    img.extract({ left, top, width, height });
    const format = sameFormatAs(ext);
    const out = ctx.out(format);
    ctx.progress(50, 'cropping');
    await writeImage(img, out, format, { quality: format === 'jpg' ? 92 : undefined });
    return { outputs: [outputFile(out)], data: { width, height, left, top, frames: animated ? (meta.pages ?? 1) : 1 } };
  },
});
