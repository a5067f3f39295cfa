import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { colorSchema } from '../../_shared/color.js';
import { composite, feather, gradientBackground, matte, readPicture, runData, solidBackground, writeComposite } from './_background.js';

export default defineTool({
  id: 'background-replace',
  section: 'image',
  group: 'ai',
  summary: 'Remove the background and fill it with a solid color or gradient.',
  description:
    'ISNet (DIS) matting finds the subject; the background becomes color, or a linear gradient from gradientColor1 (default: color) to ' +
    'gradientColor2 (default #000000) at gradientAngle (CSS convention: 180 = top to bottom). feather softens the mask edge by that many pixels.',
  input: { kind: 'file', accept: ['image/*'] },
  frames: 'first',
  settings: z.object({
    backgroundType: z.enum(['color', 'gradient']).default('color').describe('Fill mode.'),
    color: colorSchema('#ffffff').describe('Fill color when backgroundType is color.'),
    gradientColor1: colorSchema().optional().describe('First gradient color; default the color setting.'),
    gradientColor2: colorSchema().optional().describe('Second gradient color; default #000000.'),
    gradientAngle: z.number().int().min(0).max(360).default(180).describe('Gradient angle in degrees.'),
    feather: z.number().int().min(0).max(20).default(0).describe('Edge feathering radius in pixels.'),
    format: z.enum(['png', 'webp']).default('png').describe('Output format.'),
  }),
  needs: { bundles: ['background-removal'] },
  execution: 'long',
  output: 'PNG or WebP with the new background',
  examples: [
    'portrait.jpg --color "#f0f0f0"',
    'portrait.jpg --background-type gradient --gradient-color1 "#ff7e5f" --gradient-color2 "#feb47b"',
  ],
  async run(ctx, { files }, s) {
    const p = await readPicture(files[0]!, ctx);
    const m = await matte(p, 'isnet-fp16', ctx);
    const { width: w, height: h } = p;
    const alpha = feather(m.alpha, w, h, s.feather);
    const background =
      s.backgroundType === 'gradient'
        ? gradientBackground(w, h, s.gradientColor1 ?? s.color, s.gradientColor2 ?? '#000000', s.gradientAngle)
        : solidBackground(w * h, s.color);
    const img = composite({ width: w, height: h, fg: p.rgb, alpha, background });
    ctx.progress(90, 'encoding');
    const out = await writeComposite(ctx, { ...img, width: w, height: h }, s.format);
    return { outputs: [out], data: { ...runData({ ...m, alpha }, 'isnet'), width: w, height: h } };
  },
});
