import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { blurredBackground, blurSigma, composite, feather, matte, readPicture, runData, writeComposite } from './_background.js';

export default defineTool({
  id: 'blur-background',
  section: 'image',
  group: 'ai',
  summary: 'Keep the subject sharp and blur everything behind it.',
  description:
    'ISNet (DIS) matting finds the subject; the background is blurred without the subject (no halo), with a Gaussian-like blur whose ' +
    'radius at intensity 100 is 1/40 of the longer side, and the sharp subject is laid back over it. feather softens the mask edge by that many pixels.',
  input: { kind: 'file', accept: ['image/*'] },
  frames: 'first',
  settings: z.object({
    intensity: z.number().int().min(1).max(100).default(50).describe('Blur intensity.'),
    feather: z.number().int().min(0).max(20).default(0).describe('Edge feathering radius in pixels.'),
    format: z.enum(['png', 'webp']).default('png').describe('Output format.'),
  }),
  needs: { bundles: ['background-removal'] },
  execution: 'long',
  output: 'PNG or WebP with the background blurred',
  examples: ['portrait.jpg', 'portrait.jpg --intensity 80 --feather 4 --format webp'],
  async run(ctx, { files }, s) {
    const p = await readPicture(files[0]!, ctx);
    const m = await matte(p, 'isnet-fp16', ctx);
    const { width: w, height: h } = p;
    const alpha = feather(m.alpha, w, h, s.feather);
    const background = blurredBackground(p, m.alpha, blurSigma(p, s.intensity));
    const img = composite({ width: w, height: h, fg: p.rgb, alpha, background });
    ctx.progress(90, 'encoding');
    const out = await writeComposite(ctx, { ...img, width: w, height: h }, s.format);
    return { outputs: [out], data: { ...runData(m, 'isnet'), width: w, height: h } };
  },
});
