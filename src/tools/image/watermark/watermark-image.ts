import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { writeImage } from '../../../engines/sharp.js';
import { outputFormat, readRgba } from '../_shared/pixels.js';
import { clipLayer, layerInput, loadLayer } from '../_shared/layer.js';
import { outputFile } from '../../_shared/output.js';

export default defineTool({
  id: 'watermark-image',
  section: 'image',
  group: 'watermark',
  summary: 'Overlay a logo image as a watermark at a corner or the center.',
  description:
    'The watermark is scaled to scale% of the base image width (aspect kept), given the opacity, and placed at position with a margin of 3% of the shorter side.',
  input: {
    kind: 'file',
    accept: ['image/*'],
    extra: [{ field: 'watermark', flag: 'watermark', accept: ['image/*'], required: true, description: 'the watermark/logo image' }],
  },
  frames: 'first',
  settings: z.object({
    opacity: z.number().min(0).max(100).default(50).describe('Watermark opacity in percent.'),
    position: z.enum(['center', 'top-left', 'top-right', 'bottom-left', 'bottom-right']).default('bottom-right').describe('Placement.'),
    scale: z.number().min(1).max(100).default(25).describe('Watermark width as a percentage of the base image width.'),
  }),
  batch: false,
  output: 'image in the input format',
  examples: ['photo.jpg --watermark logo.png --position top-left --opacity 70'],
  async run(ctx, { files, extra }, s) {
    const input = files[0]!;
    const { data, ...info } = await readRgba(input, ctx.workDir);
    const W = info.width;
    const H = info.height;
    const layer = await loadLayer(extra.watermark![0]!, ctx.workDir, {
      width: Math.max(1, Math.round((W * s.scale) / 100)),
      opacity: s.opacity / 100,
    });
    const margin = Math.round(Math.min(W, H) * 0.03);
    const left = s.position === 'center' ? (W - layer.width) / 2 : s.position.endsWith('left') ? margin : W - layer.width - margin;
    const top = s.position === 'center' ? (H - layer.height) / 2 : s.position.startsWith('top') ? margin : H - layer.height - margin;
    const x = Math.max(0, Math.round(left));
    const y = Math.max(0, Math.round(top));
    const clipped = clipLayer(layer, x, y, W, H);
    const sharp = (await import('sharp')).default;
    const img = sharp(data, { raw: { width: W, height: H, channels: 4 } });
    if (clipped) img.composite([layerInput(clipped)]);
    const format = outputFormat(input);
    const out = ctx.out(format);
    // Worked on as RGBA: the result of an input without alpha is written without it when nothing became transparent.
    await writeImage(img, out, format, { quality: format === 'jpg' ? 92 : undefined, trimAlpha: !info.hadAlpha });
    return { outputs: [outputFile(out)], data: { left: x, top: y, width: layer.width, height: layer.height } };
  },
});
