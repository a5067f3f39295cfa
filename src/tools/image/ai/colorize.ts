import { z } from 'zod';
import { colorizeDDColor, colorizeTint } from '../../../ai/tasks/colorize.js';
import { defineTool } from '../../../core/tool.js';
import { DDCOLOR_FILE } from '../../../ai/bundles/object-eraser-colorize.js';
import { decodeRgb, ERASER, hasModelFile, missingModelFile, modelData, outFormat, writeRgb } from './inpaint-common.js';

export default defineTool({
  id: 'colorize',
  section: 'image',
  group: 'ai',
  summary: 'Add natural color to black-and-white photos.',
  description:
    'model ddcolor (and auto) runs DDColor, a colorization network from the object-eraser-colorize bundle (FEATURE_NOT_INSTALLED ' +
    'without it): it predicts the colour at 512×512 and kiln puts it under the photo’s own full-resolution lightness. ' +
    'model opencv is the classical fallback and runs no model: a split-tone tint by lightness (cool shadows, warm highlights), ' +
    'not natural colour — data.method says tint and data.model is null. intensity 0–1 blends the new colour with the photo’s own.',
  input: { kind: 'file', accept: ['image/*'] },
  frames: 'first',
  settings: z.object({
    intensity: z.number().min(0).max(1).default(1).describe('Color intensity.'),
    model: z
      .enum(['auto', 'ddcolor', 'opencv'])
      .default('auto')
      .describe("Colorization model; 'opencv' is the classical fallback (a tint, no model)."),
  }),
  needs: { optionalBundles: ['object-eraser-colorize'] },
  execution: 'long',
  output: 'image in the input format',
  examples: ['old.jpg -o old-color.jpg', 'scan.png --intensity 0.7', 'scan.png --model opencv'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    if (s.model !== 'opencv' && !(await hasModelFile(ctx.dataDir, ERASER, DDCOLOR_FILE))) {
      await missingModelFile(ctx.dataDir, 'colorize', ERASER, DDCOLOR_FILE, 'DDColor; --model opencv tints without a model');
    }
    const img = await decodeRgb(input, ctx);
    ctx.progress(10, 'colorizing');
    const t0 = performance.now();
    let data: Record<string, unknown>;
    let rgb: Uint8Array;
    if (s.model === 'opencv') {
      rgb = await colorizeTint(img, s.intensity, ctx.signal);
      data = {
        method: 'tint',
        model: null,
        note: 'No colour model ran: a split-tone tint by lightness, not natural colour. model ddcolor needs the object-eraser-colorize bundle.',
      };
    } else {
      const r = await colorizeDDColor(img, s.intensity, {
        dataDir: ctx.dataDir,
        signal: ctx.signal,
        progress: (f, stage) => ctx.progress(10 + f * 80, stage),
      });
      rgb = r.rgb;
      data = { method: 'ddcolor', ...modelData(r.info) };
    }
    const out = await writeRgb(ctx, { ...img, rgb }, outFormat(input, 'auto'), 92);
    return { outputs: [out], data: { ...data, intensity: s.intensity, ms: Math.round(performance.now() - t0) } };
  },
});
