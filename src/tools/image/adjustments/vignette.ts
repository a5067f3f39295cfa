import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { colorSchema, parseColor } from '../../_shared/color.js';
import { outputFormat, readRgba, writeRaw } from '../_shared/pixels.js';

export default defineTool({
  id: 'vignette',
  section: 'image',
  group: 'adjustments',
  summary: 'Darken (or tint) the image edges with a configurable vignette.',
  description:
    'Distance from (centerX, centerY) is measured in half-diagonals (roundness 100: a circle) or along the image axes (roundness 0: an ellipse of the image aspect). ' +
    'The color fades in with a smoothstep from radius×(1−softness) to radius and is full beyond; strength is its opacity there.',
  input: { kind: 'file', accept: ['image/*'] },
  frames: 'first',
  settings: z.object({
    strength: z.number().min(0.1).max(1).default(0.5).describe('Vignette opacity.'),
    color: colorSchema('#000000').describe('Vignette color.'),
    radius: z.int().min(0).max(100).default(70).describe('Outer radius as percent of the half-diagonal.'),
    softness: z.int().min(0).max(100).default(50).describe('Feather softness.'),
    roundness: z.int().min(0).max(100).default(100).describe('100 = circle, 0 = ellipse following the image aspect.'),
    centerX: z.int().min(0).max(100).default(50).describe('Horizontal center in percent.'),
    centerY: z.int().min(0).max(100).default(50).describe('Vertical center in percent.'),
  }),
  output: 'image in the input format',
  examples: ['photo.jpg --strength 0.8 --radius 60'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const raw = await readRgba(input, ctx.workDir);
    const { width: W, height: H, data: d } = raw;
    const c = parseColor(s.color);
    const opacity = s.strength * c.alpha;
    const cx = (s.centerX / 100) * W;
    const cy = (s.centerY / 100) * H;
    const halfDiag = Math.hypot(W / 2, H / 2);
    const round = s.roundness / 100;
    // Circle: both axes in half-diagonals. Ellipse: each axis in its own half-size, scaled so corners are 1.
    const sx = round / halfDiag + (1 - round) / ((W / 2) * Math.SQRT2);
    const sy = round / halfDiag + (1 - round) / ((H / 2) * Math.SQRT2);
    const outer = s.radius / 100;
    const inner = outer * (1 - s.softness / 100);
    const span = outer - inner;
    for (let y = 0; y < H; y++) {
      const dy = (y + 0.5 - cy) * sy;
      for (let x = 0, i = y * W * 4; x < W; x++, i += 4) {
        const dx = (x + 0.5 - cx) * sx;
        const dist = Math.sqrt(dx * dx + dy * dy);
        let t: number;
        if (dist <= inner) continue;
        if (dist >= outer || span <= 0) t = 1;
        else {
          const u = (dist - inner) / span;
          t = u * u * (3 - 2 * u);
        }
        const k = t * opacity;
        d[i] = d[i]! + (c.r - d[i]!) * k;
        d[i + 1] = d[i + 1]! + (c.g - d[i + 1]!) * k;
        d[i + 2] = d[i + 2]! + (c.b - d[i + 2]!) * k;
      }
    }
    return { outputs: [await writeRaw(ctx, raw, outputFormat(input))] };
  },
});
