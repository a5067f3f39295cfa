import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { visibleSize, writeImage, type ImageFormat } from '../../../engines/sharp.js';
import { outputFile } from '../../_shared/output.js';
import { openInput } from '../_shared/decode.js';
import { keepsAnimation } from '../_shared/frames.js';

export default defineTool({
  id: 'optimize-for-web',
  section: 'image',
  group: 'optimization',
  summary: 'Re-encode an image for the web: modern format, quality, max dimensions, metadata removal.',
  description:
    'Converts to webp (default), jpeg, avif or png at the given quality, downscales to fit maxWidth × maxHeight (never enlarges), ' +
    'writes progressive JPEG / interlaced PNG when progressive is on, and drops EXIF, GPS, ICC and XMP unless stripMetadata is false. ' +
    'EXIF orientation is applied to the pixels first, so the picture looks the same without its metadata. Animated input stays animated in webp.',
  input: { kind: 'file', accept: ['image/*'] },
  frames: (f, s) => !keepsAnimation(f.type?.ext, s.format),
  settings: z.object({
    format: z.enum(['webp', 'jpeg', 'avif', 'png']).default('webp').describe('Output format.'),
    quality: z.int().min(1).max(100).default(80).describe('Encoder quality.'),
    maxWidth: z.int().min(1).optional().describe('Downscale when wider than this.'),
    maxHeight: z.int().min(1).optional().describe('Downscale when taller than this.'),
    progressive: z.boolean().default(true).describe('Progressive/interlaced encoding where the format supports it.'),
    stripMetadata: z.boolean().default(true).describe('Remove EXIF, GPS, ICC and XMP metadata.'),
  }),
  output: 'image (webp, jpeg, avif or png)',
  examples: ['photo.jpg', 'photo.jpg --format jpeg --max-width 1600 --quality 75', 'photo.png --format avif --no-strip-metadata'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const ext = input.type?.ext;
    const format: ImageFormat = s.format === 'jpeg' ? 'jpg' : s.format;
    const animated = keepsAnimation(ext, format);
    const img = await openInput(input, ctx.workDir, ctx.signal, { animated });
    const meta = await img.metadata();
    if ((meta.orientation ?? 1) > 1) img.autoOrient();
    const { width: W, height: H } = visibleSize(meta);
    if ((s.maxWidth && W > s.maxWidth) || (s.maxHeight && H > s.maxHeight)) {
      img.resize({ width: s.maxWidth, height: s.maxHeight, fit: 'inside', withoutEnlargement: true });
    }
    if (format === 'jpg' && meta.hasAlpha) img.flatten({ background: '#ffffff' });
    if (!s.stripMetadata) img.keepMetadata();
    ctx.progress(40, 'encoding');
    const out = ctx.out(format);
    await writeImage(img, out, format, {
      quality: format === 'png' && s.quality >= 100 ? undefined : s.quality,
      progressive: s.progressive,
      // One encode where size is the point: zlib's and libaom's more thorough efforts (AVIF 4: ~4x the time of 3).
      effort: format === 'png' ? 9 : format === 'avif' ? 4 : undefined,
      optimizeSize: true,
    });
    const after = await stat(out);
    return {
      outputs: [outputFile(out)],
      data: {
        format: s.format,
        originalSize: input.size,
        size: after.size,
        savedPercent: Math.round((1 - after.size / input.size) * 1000) / 10,
      },
    };
  },
});
