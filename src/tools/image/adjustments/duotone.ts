import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { colorSchema, parseColor } from '../../_shared/color.js';
import { outputFormat, readRgba, writeRaw } from '../_shared/pixels.js';

export default defineTool({
  id: 'duotone',
  section: 'image',
  group: 'adjustments',
  summary: 'Map shadows and highlights to two colors for a duotone look.',
  description:
    'Each pixel’s luma (BT.709) picks a point on the gradient from shadow to highlight; intensity mixes the result with the original.',
  input: { kind: 'file', accept: ['image/*'] },
  frames: 'first',
  settings: z.object({
    shadow: colorSchema('#1e3a8a').describe('Color for dark tones.'),
    highlight: colorSchema('#fbbf24').describe('Color for bright tones.'),
    intensity: z.int().min(0).max(100).default(100).describe('Effect strength; 0 returns the original.'),
  }),
  output: 'image in the input format',
  examples: ['photo.jpg --shadow "#000000" --highlight "#ff0066"'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const raw = await readRgba(input, ctx.workDir);
    const lo = parseColor(s.shadow);
    const hi = parseColor(s.highlight);
    const k = s.intensity / 100;
    // One lookup table per channel indexed by luma: the gradient and the mix in one step.
    const lut = [new Float32Array(256), new Float32Array(256), new Float32Array(256)];
    for (let v = 0; v < 256; v++) {
      const t = v / 255;
      lut[0]![v] = lo.r + (hi.r - lo.r) * t;
      lut[1]![v] = lo.g + (hi.g - lo.g) * t;
      lut[2]![v] = lo.b + (hi.b - lo.b) * t;
    }
    const d = raw.data;
    for (let i = 0; i < d.length; i += 4) {
      const y = Math.round(0.2126 * d[i]! + 0.7152 * d[i + 1]! + 0.0722 * d[i + 2]!);
      for (let c = 0; c < 3; c++) d[i + c] = d[i + c]! + (lut[c]![y]! - d[i + c]!) * k;
    }
    return { outputs: [await writeRaw(ctx, raw, outputFormat(input))] };
  },
});
