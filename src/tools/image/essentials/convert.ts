import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { EPS_DPI } from '../../../engines/eps-raster.js';
import { type ImageFormat, inputMetadata, writeImage } from '../../../engines/sharp.js';
import { openInput } from '../_shared/decode.js';
import { writeEps } from '../_shared/eps-writer.js';
import { outputFile } from '../../_shared/output.js';
import { keepsAnimation } from '../_shared/frames.js';

// 'eps' is outside the catalog's public enum (decision D09): the png-to-eps and jpg-to-eps presets fix it.
const FORMATS = ['jpg', 'png', 'webp', 'avif', 'tiff', 'gif', 'heic', 'heif', 'eps'] as const;

export default defineTool({
  id: 'convert',
  section: 'image',
  group: 'essentials',
  summary: "Change an image's file format; base tool of the image-format presets.",
  description:
    'Writes jpg, png, webp, avif, tiff, gif, heic (HEVC, through the vips CLI) or heif (AV1). quality applies to the lossy encoders (JPEG, WebP, AVIF, HEIC/HEIF, TIFF) and, below 100, makes PNG palette-based; the encoder default is used when omitted. ' +
    'Extension (catalog D09): format eps writes Encapsulated PostScript (level 2, sized by the dpi the image records, else one pixel per point; DCT-coded when quality is given, lossless otherwise). ' +
    'EPS input is rasterized by Ghostscript at 300 dpi. Animated GIF/WebP/APNG stay animated when converted to GIF or WebP; other conversions keep the first frame and say so in warnings.',
  input: { kind: 'file', accept: ['image/*'], inMemory: true },
  frames: (f, s) => !keepsAnimation(f.type?.ext, s.format),
  settings: z.object({
    format: z.enum(FORMATS).describe('Target format (eps: extension used by the png-to-eps/jpg-to-eps presets).'),
    quality: z.int().min(1).max(100).optional().describe('Encoder quality for lossy formats; encoder default when omitted.'),
  }),
  output: 'image in the requested format',
  examples: ['photo.png --format webp --quality 80', 'photo.heic --format jpg', 'logo.png --format eps'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const ext = input.type?.ext;
    // APNG too: openInput decodes its frames through ffmpeg (sharp writes no APNG, so PNG output is a still).
    const keepFrames = keepsAnimation(ext, s.format);
    // Through openInput so Photoshop files (psd-to-jpg, psd-to-png) are flattened by ImageMagick first.
    const img = await openInput(input, ctx.workDir, ctx.signal, { animated: keepFrames });
    const meta = await inputMetadata(img);
    if ((meta.orientation ?? 1) > 1) img.autoOrient();
    ctx.progress(30, 'encoding');
    if (s.format === 'eps') {
      const out = ctx.out('eps');
      // An EPS is placed by its bounding box, so it keeps the picture's print size: a 300 dpi logo of 300 px
      // was a 300 pt (4.2 inch) box instead of 1 inch. No recorded resolution: one pixel per point.
      const dpi = ext === 'eps' ? EPS_DPI : meta.density;
      const r = await writeEps(img, out, { quality: s.quality, dpi, title: input.name });
      return { outputs: [outputFile(out)], data: { format: 'eps', width: r.width, height: r.height } };
    }
    const format: ImageFormat = s.format;
    // JPEG has no alpha; sharp would otherwise composite transparent areas onto black.
    if (format === 'jpg' && meta.hasAlpha) img.flatten({ background: '#ffffff' });
    const out = ctx.out(format);
    await writeImage(img, out, format, { quality: s.quality });
    return { outputs: [outputFile(out)] };
  },
});
