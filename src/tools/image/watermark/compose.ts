import { z } from 'zod';
import type { Blend } from 'sharp';
import { KilnError } from '../../../core/errors.js';
import { defineTool } from '../../../core/tool.js';
import { writeImage } from '../../../engines/sharp.js';
import { outputFormat, readRgba } from '../_shared/pixels.js';
import { clipLayer, layerInput, loadLayer } from '../_shared/layer.js';
import { outputFile } from '../../_shared/output.js';

export default defineTool({
  id: 'compose',
  section: 'image',
  group: 'watermark',
  summary: 'Layer a second image on top of the base at a position, opacity and blend mode.',
  description:
    'The overlay keeps its own size; the part beyond the base image’s edges is cut off. The result has the base image’s dimensions.',
  input: {
    kind: 'file',
    accept: ['image/*'],
    extra: [
      { field: 'overlay', flag: 'overlay', accept: ['image/*'], required: true, description: 'the image layered on top of the base image' },
    ],
  },
  frames: 'first',
  settings: z.object({
    x: z.number().min(0).default(0).describe('Horizontal offset of the overlay in pixels.'),
    y: z.number().min(0).default(0).describe('Vertical offset of the overlay in pixels.'),
    opacity: z.number().min(0).max(100).default(100).describe('Overlay opacity in percent.'),
    blend: z
      .enum(['over', 'multiply', 'screen', 'overlay', 'darken', 'lighten', 'hard-light', 'soft-light', 'difference', 'exclusion'])
      .default('over')
      .describe('Blend mode.'),
  }),
  batch: false,
  output: 'image in the input format, with the base image dimensions',
  examples: ['base.jpg --overlay sticker.png --x 40 --y 40 --blend multiply'],
  async run(ctx, { files, extra }, s) {
    const input = files[0]!;
    const { data, ...info } = await readRgba(input, ctx.workDir);
    const x = Math.round(s.x);
    const y = Math.round(s.y);
    const layer = await loadLayer(extra.overlay![0]!, ctx.workDir, { opacity: s.opacity / 100 });
    const clipped = clipLayer(layer, x, y, info.width, info.height);
    if (!clipped)
      throw new KilnError('VALIDATION_ERROR', `The overlay at x=${x}, y=${y} lies outside the ${info.width}×${info.height} base image.`, {
        details: [{ path: 'x', message: 'outside the base image' }],
      });
    const sharp = (await import('sharp')).default;
    const img = sharp(data, { raw: { width: info.width, height: info.height, channels: 4 } }).composite([
      { ...layerInput(clipped), blend: s.blend as Blend },
    ]);
    const format = outputFormat(input);
    const out = ctx.out(format);
    // Worked on as RGBA: the result of an input without alpha is written without it when nothing became transparent.
    await writeImage(img, out, format, { quality: format === 'jpg' ? 92 : undefined, trimAlpha: !info.hadAlpha });
    return { outputs: [outputFile(out)] };
  },
});
