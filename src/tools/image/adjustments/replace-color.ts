import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { colorSchema, parseColor } from '../../_shared/color.js';
import { outputFormat, readRgba, writeRaw } from '../_shared/pixels.js';

export default defineTool({
  id: 'replace-color',
  section: 'image',
  group: 'adjustments',
  summary: 'Replace one color with another (or with transparency) within a tolerance.',
  description:
    'A pixel matches when its RGB distance to sourceColor (Euclidean, scaled so 255 spans black to white) is at most tolerance. ' +
    'Matches become targetColor, or fully transparent with makeTransparent (the output is then PNG when the input format has no alpha).',
  input: { kind: 'file', accept: ['image/*'] },
  frames: 'first',
  settings: z.object({
    sourceColor: colorSchema('#FF0000').describe('Color to find.'),
    targetColor: colorSchema('#00FF00').describe('Replacement color.'),
    makeTransparent: z.boolean().default(false).describe('Make matching pixels transparent instead of recoloring.'),
    tolerance: z.number().min(0).max(255).default(30).describe('Color matching tolerance.'),
  }),
  output: 'image in the input format (PNG when transparency is needed)',
  examples: ['logo.png --source-color "#ffffff" --make-transparent --tolerance 20'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const raw = await readRgba(input, ctx.workDir);
    const src = parseColor(s.sourceColor);
    const dst = parseColor(s.targetColor);
    const dstA = Math.round(dst.alpha * 255);
    // Compare squared distances: tolerance t on the 0-255 scale is t*sqrt(3) in RGB space.
    const limit = s.tolerance * s.tolerance * 3;
    const d = raw.data;
    let matched = 0;
    for (let i = 0; i < d.length; i += 4) {
      const dr = d[i]! - src.r;
      const dg = d[i + 1]! - src.g;
      const db = d[i + 2]! - src.b;
      if (dr * dr + dg * dg + db * db > limit) continue;
      matched++;
      if (s.makeTransparent) d[i + 3] = 0;
      else {
        d[i] = dst.r;
        d[i + 1] = dst.g;
        d[i + 2] = dst.b;
        if (dstA < 255) d[i + 3] = dstA;
      }
    }
    const out = await writeRaw(ctx, raw, outputFormat(input, s.makeTransparent || dstA < 255));
    return { outputs: [out], data: { matchedPixels: matched, matchedPercent: +((100 * matched) / (raw.width * raw.height)).toFixed(3) } };
  },
});
