import { z } from 'zod';
import { KilnError } from '../../../core/errors.js';
import { defineTool } from '../../../core/tool.js';
import { colorSchema } from '../../_shared/color.js';
import {
  type Background,
  blurredBackground,
  blurSigma,
  composite,
  decontaminate,
  dropShadow,
  gradientBackground,
  imageBackground,
  MATTE_MODELS,
  matte,
  matteModel,
  readPicture,
  refineEdges,
  runData,
  solidBackground,
  writeComposite,
} from './_background.js';

export default defineTool({
  id: 'remove-background',
  section: 'image',
  group: 'ai',
  summary: 'Cut the subject out and leave a transparent, colored, gradient, blurred or image background.',
  description:
    'ISNet (DIS) matting finds the subject; the matte is resampled to the full image. edgeRefine 1-3 runs a guided filter over the edge band ' +
    '(radius grows with the level), decontaminate solves the old background colour out of semi-transparent edge pixels. ' +
    'backgroundType: transparent, color (backgroundColor, default white), gradient (gradientColor1 → gradientColor2 at gradientAngle, CSS convention: ' +
    '180 = top to bottom), blur (the original background blurred without the subject, blurIntensity default 50), image (the backgroundImage file, ' +
    'scaled to cover). blurEnabled with transparent means blur; with image it blurs the replacement image. shadowEnabled adds a soft drop shadow ' +
    `(shadowOpacity, default 50). model: ${Object.keys(MATTE_MODELS).join(', ')} (isnet-small is the quantised, faster model).`,
  input: {
    kind: 'file',
    accept: ['image/*'],
    extra: [
      {
        field: 'backgroundImage',
        flag: 'background-image',
        accept: ['image/*'],
        required: false,
        description: "replacement background image, used when backgroundType is 'image'",
      },
    ],
  },
  frames: 'first',
  settings: z.object({
    model: z
      .string()
      .optional()
      .describe(`Model variant: ${Object.keys(MATTE_MODELS).join(', ')} (default isnet).`),
    backgroundType: z.enum(['transparent', 'color', 'gradient', 'blur', 'image']).default('transparent').describe('Background treatment.'),
    backgroundColor: colorSchema().optional().describe('Solid background (backgroundType=color); default #ffffff.'),
    gradientColor1: colorSchema().optional().describe('First gradient color; default #ffffff.'),
    gradientColor2: colorSchema().optional().describe('Second gradient color; default #000000.'),
    gradientAngle: z.number().min(0).max(360).optional().describe('Gradient angle in degrees (CSS convention); default 180.'),
    blurEnabled: z.boolean().optional().describe('Blur the original background behind the subject.'),
    blurIntensity: z.number().min(0).max(100).optional().describe('Blur strength; default 50.'),
    shadowEnabled: z.boolean().optional().describe('Drop shadow under the subject.'),
    shadowOpacity: z.number().min(0).max(100).optional().describe('Shadow opacity; default 50.'),
    outputFormat: z.enum(['png', 'webp', 'avif']).optional().describe('Output format (PNG when omitted).'),
    edgeRefine: z.number().int().min(0).max(3).optional().describe('Edge refinement level (0 = the raw matte).'),
    decontaminate: z.boolean().optional().describe('Remove color spill from edges.'),
  }),
  check(s) {
    matteModel(s.model);
  },
  needs: { bundles: ['background-removal'] },
  execution: 'long',
  batch: false,
  output: 'PNG (or webp/avif per outputFormat) with the new background or transparency',
  examples: [
    'portrait.jpg',
    'portrait.jpg --background-type color --background-color "#0a66c2"',
    'portrait.jpg --background-type image --background-image beach.jpg --shadow-enabled',
    'portrait.jpg --model isnet-small --edge-refine 2 --decontaminate --output-format webp',
  ],
  async run(ctx, { files, extra }, s) {
    const model = matteModel(s.model);
    const bgFile = extra.backgroundImage?.[0];
    if (s.backgroundType === 'image' && !bgFile)
      throw new KilnError(
        'VALIDATION_ERROR',
        'backgroundType image needs the background image: the form field "backgroundImage" (CLI --background-image).',
        { details: [{ path: 'backgroundImage', message: 'required when backgroundType is image' }] },
      );
    const p = await readPicture(files[0]!, ctx);
    const m = await matte(p, model, ctx);
    const alpha = refineEdges(p, m.alpha, s.edgeRefine ?? 0);
    const fg = s.decontaminate ? decontaminate(p, alpha) : p.rgb;
    const { width: w, height: h } = p;
    const n = w * h;
    const intensity = s.blurIntensity ?? 50;
    const blur = s.backgroundType === 'blur' || (s.blurEnabled === true && s.backgroundType === 'transparent');
    let background: Background | undefined;
    if (blur) background = blurredBackground(p, alpha, blurSigma(p, intensity));
    else if (s.backgroundType === 'color') background = solidBackground(n, s.backgroundColor ?? '#ffffff');
    else if (s.backgroundType === 'gradient')
      background = gradientBackground(w, h, s.gradientColor1 ?? '#ffffff', s.gradientColor2 ?? '#000000', s.gradientAngle ?? 180);
    else if (s.backgroundType === 'image') background = await imageBackground(bgFile!, p, ctx, s.blurEnabled ? blurSigma(p, intensity) : 0);
    const shadow = s.shadowEnabled ? dropShadow(alpha, w, h, (s.shadowOpacity ?? 50) / 100) : undefined;
    const img = composite({ width: w, height: h, fg, alpha, background, shadow });
    ctx.progress(90, 'encoding');
    const out = await writeComposite(ctx, { ...img, width: w, height: h }, s.outputFormat ?? 'png');
    return {
      outputs: [out],
      data: {
        ...runData({ ...m, alpha }, s.model ?? 'isnet'),
        backgroundType: blur ? 'blur' : s.backgroundType,
        width: w,
        height: h,
      },
    };
  },
});
