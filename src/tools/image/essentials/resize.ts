import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { inputMetadata, sameFormatAs, visibleSize, writeImage } from '../../../engines/sharp.js';
import { SOCIAL_PRESETS, SOCIAL_PRESET_IDS } from '../_shared/social-presets.js';
import { openInput } from '../_shared/decode.js';
import { outputFile } from '../../_shared/output.js';
import { dropsFrames, keepsFrames } from '../_shared/frames.js';
import { refuseOverPixelLimit } from '../_shared/pixel-limit.js';

export default defineTool({
  id: 'resize',
  section: 'image',
  group: 'essentials',
  summary: 'Scale an image to exact pixel dimensions, a percentage, or a social-media size preset.',
  description:
    'Give width and/or height (the other side follows the aspect ratio), or percentage, or one of 23 social-media presets. ' +
    'fit decides how the image fills a box of both width and height. withoutEnlargement never upscales.',
  input: { kind: 'file', accept: ['image/*'], inMemory: true },
  frames: dropsFrames,
  settings: z.object({
    width: z.int().min(1).max(16383).optional().describe('Target width in pixels.'),
    height: z.int().min(1).max(16383).optional().describe('Target height in pixels.'),
    fit: z
      .enum(['cover', 'contain', 'fill', 'inside', 'outside'])
      .optional()
      .describe('How the image fits a width×height box (default contain; cover with a preset).'),
    percentage: z.number().min(1).max(10000).optional().describe('Scale by percentage instead of fixed dimensions (50 = half size).'),
    withoutEnlargement: z.boolean().default(false).describe('Never upscale an image that is smaller than the target.'),
    preset: z.enum(SOCIAL_PRESET_IDS).optional().describe('One of the 23 social-media sizes; sets width and height.'),
  }),
  check: (s) => {
    if (s.width === undefined && s.height === undefined && s.percentage === undefined && s.preset === undefined) {
      return 'resize needs width, height, percentage or preset.';
    }
  },
  output: 'image in the input format',
  examples: ['photo.jpg --width 800 -o small.jpg', 'photo.jpg --preset instagram-story -o story.jpg', '*.png --percentage 50 -o half/'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    // Animated GIF/WebP and a multi-page TIFF keep every frame or page (sharp works on the whole strip).
    const animated = await keepsFrames(input);
    const img = await openInput(input, ctx.workDir, ctx.signal, { animated });
    // EXIF orientation first, so width means the width a person sees (without one, sharp leaves the
    // pixels as they are). The header is read separately only when a percentage needs the source size.
    img.autoOrient();
    let width = s.width;
    let height = s.height;
    let fit = s.fit ?? 'contain';
    if (s.preset) {
      ({ width, height } = SOCIAL_PRESETS[s.preset]);
      fit = s.fit ?? 'cover';
    } else if (s.percentage !== undefined && width === undefined && height === undefined) {
      const { width: srcW, height: srcH } = visibleSize(await inputMetadata(img));
      width = Math.max(1, Math.round((srcW * s.percentage) / 100));
      height = Math.max(1, Math.round((srcH * s.percentage) / 100));
      fit = 'fill';
    }
    // With one side given, fit has no box to fill; sharp's contain would pad the other side.
    if ((width === undefined || height === undefined) && fit === 'contain') fit = 'inside';
    // The header is cached: writeImage reads the same one. Inputs are held to MAX_INPUT_PIXELS, and so is
    // what they are resized to: `--width 16383 --height 16383 --fit fill` of a 1 KB PNG made a 268 MP
    // picture (800 MB of memory, a minute of CPU) that any user of a server could ask for.
    refuseHugeOutput(visibleSize(await inputMetadata(img)), { width, height, fit, withoutEnlargement: s.withoutEnlargement });
    img.resize({
      width,
      height,
      fit,
      withoutEnlargement: s.withoutEnlargement,
      background: { r: 0, g: 0, b: 0, alpha: 0 },
    });
    const format = sameFormatAs(input.type?.ext);
    const out = ctx.out(format);
    ctx.progress(50, 'resizing');
    await writeImage(img, out, format, { quality: format === 'jpg' ? 90 : undefined, keepMetadata: false });
    return { outputs: [outputFile(out)] };
  },
});

/** Refuses a resize whose result (every frame of an animation counted) would pass MAX_INPUT_PIXELS. */
function refuseHugeOutput(
  src: { width: number; height: number; pages: number },
  r: { width?: number; height?: number; fit: string; withoutEnlargement: boolean },
): void {
  const sx = r.width !== undefined ? r.width / src.width : undefined;
  const sy = r.height !== undefined ? r.height / src.height : undefined;
  let [w, h] = [src.width, src.height];
  if (sx !== undefined && sy !== undefined) {
    if (r.fit === 'inside' || r.fit === 'outside') {
      const k = r.fit === 'inside' ? Math.min(sx, sy) : Math.max(sx, sy);
      [w, h] = [src.width * k, src.height * k];
    } else [w, h] = [r.width!, r.height!];
  } else if (sx !== undefined || sy !== undefined) {
    const k = (sx ?? sy)!;
    [w, h] = [src.width * k, src.height * k];
  }
  if (r.withoutEnlargement) [w, h] = [Math.min(w, src.width), Math.min(h, src.height)];
  refuseOverPixelLimit({ what: 'resized image', width: w, height: h, frames: src.pages });
}
