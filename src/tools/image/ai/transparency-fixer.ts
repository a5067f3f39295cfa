import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { composite, decontaminate, matte, medianFiltered, readPicture, runData, visibleRgb, writeComposite } from './_background.js';

export default defineTool({
  id: 'transparency-fixer',
  section: 'image',
  group: 'ai',
  summary: "Repair 'fake transparent' PNGs (fringes, halos, semi-transparent artifacts) with a high-resolution matting model.",
  description:
    'The image as a viewer shows it (transparent parts over white) is matted by ISNet (DIS, 1024×1024 model input, the matte resampled to the ' +
    'full size); a baked-in checkerboard or flat backdrop becomes real transparency, and an existing alpha channel is only ever reduced. ' +
    'defringe (0-100) then cuts the faint outer fringe (alpha below defringe/200 drops to 0, the rest is restretched) and removes the old ' +
    'backdrop colour from the remaining edge pixels in proportion. removeWatermark runs a median filter over the image first (3×3, 5×5 from ' +
    '1500 px): it suppresses thin strokes such as text or grid watermarks and softens fine detail; it does not reconstruct what a large logo hides.',
  input: { kind: 'file', accept: ['image/*'] },
  frames: 'first',
  settings: z.object({
    defringe: z.number().min(0).max(100).default(30).describe('De-fringe strength.'),
    outputFormat: z.enum(['png', 'webp']).default('png').describe('Output format.'),
    removeWatermark: z.boolean().default(false).describe('Median-filter pre-processing (suppresses thin overlaid strokes).'),
  }),
  needs: { bundles: ['background-removal'] },
  execution: 'long',
  output: 'PNG or WebP with a clean alpha channel',
  examples: ['fake-transparent.png', 'logo.png --defringe 60 --output-format webp'],
  async run(ctx, { files }, s) {
    const read = await readPicture(files[0]!, ctx);
    const median = s.removeWatermark ? (Math.max(read.width, read.height) >= 1500 ? 5 : 3) : 0;
    const p = median ? await medianFiltered(read, median) : read;
    const m = await matte(p, 'isnet-fp16', ctx);
    const n = p.width * p.height;
    const cut = s.defringe / 200;
    const alpha = new Float32Array(n);
    for (let i = 0; i < n; i++) {
      const a = m.alpha[i]!;
      alpha[i] = a <= cut ? 0 : cut > 0 ? Math.min(1, (a - cut) / (1 - cut)) : a;
    }
    const shown = { ...p, rgb: visibleRgb(p) };
    const fg = s.defringe > 0 ? decontaminate(shown, alpha, s.defringe / 100) : shown.rgb;
    const img = composite({ width: p.width, height: p.height, fg, alpha });
    ctx.progress(90, 'encoding');
    const out = await writeComposite(ctx, { ...img, width: p.width, height: p.height }, s.outputFormat);
    return {
      outputs: [out],
      data: {
        ...runData({ ...m, alpha }, 'isnet'),
        width: p.width,
        height: p.height,
        hadAlpha: Boolean(p.alpha),
        ...(median ? { medianFilter: median } : {}),
      },
    };
  },
});
