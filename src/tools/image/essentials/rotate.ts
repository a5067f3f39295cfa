import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { getSharp, inputMetadata, isAnimatedFormat, mapFrames, sameFormatAs, supportsAlpha, writeImage } from '../../../engines/sharp.js';
import { outputFile } from '../../_shared/output.js';
import { openInput } from '../_shared/decode.js';

export default defineTool({
  id: 'rotate',
  section: 'image',
  group: 'essentials',
  summary: 'Rotate by any angle and/or mirror horizontally or vertically.',
  description:
    'angle turns the image clockwise (any number of degrees, negative = counter-clockwise); the rotation is applied before the flips. ' +
    'Angles that are not a multiple of 90 enlarge the canvas; the new corners are transparent in formats with alpha and white in JPEG. ' +
    'EXIF orientation is applied first. Animated GIF and WebP stay animated (each frame is turned).',
  input: { kind: 'file', accept: ['image/*'] },
  // Animated GIF and WebP keep every frame; an APNG or a multi-page TIFF its first.
  frames: (f) => !isAnimatedFormat(f.type?.ext),
  settings: z.object({
    angle: z.number().default(0).describe('Clockwise rotation angle in degrees; rotation is applied before flips.'),
    horizontal: z.boolean().default(false).describe('Mirror horizontally.'),
    vertical: z.boolean().default(false).describe('Flip vertically.'),
  }),
  output: 'image in the input format',
  examples: ['photo.jpg --angle 90 -o turned.jpg', 'logo.png --angle 15', 'photo.jpg --horizontal'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const ext = input.type?.ext;
    const format = sameFormatAs(ext);
    const angle = ((s.angle % 360) + 360) % 360;
    const background = supportsAlpha(format) ? { r: 0, g: 0, b: 0, alpha: 0 } : { r: 255, g: 255, b: 255, alpha: 1 };
    const animated = isAnimatedFormat(ext);
    let img = await openInput(input, ctx.workDir, ctx.signal, { animated });
    const meta = await inputMetadata(img);
    ctx.progress(30, 'rotating');
    if (animated && (meta.pages ?? 1) > 1) {
      // libvips refuses rotate on multi-page images: turn each frame, then join them again.
      if (angle !== 0) img = await mapFrames(input.path, meta, (f) => f.rotate(angle, { background }), ctx.signal);
      if (s.vertical) img.flip();
      if (s.horizontal) img.flop();
    } else {
      if ((meta.orientation ?? 1) > 1) img.autoOrient();
      if (angle !== 0) {
        // sharp runs flips before an arbitrary rotation inside one pipeline; materialise the rotation
        // first so that flips mirror the rotated picture, as the setting promises.
        img.rotate(angle, { background });
        if (s.horizontal || s.vertical) {
          const { data, info } = await img.raw().toBuffer({ resolveWithObject: true });
          const sharp = await getSharp();
          img = sharp(data, { raw: { width: info.width, height: info.height, channels: info.channels } });
        }
      }
      if (s.vertical) img.flip();
      if (s.horizontal) img.flop();
    }
    const out = ctx.out(format);
    await writeImage(img, out, format, { quality: format === 'jpg' ? 92 : undefined });
    return { outputs: [outputFile(out)] };
  },
});
