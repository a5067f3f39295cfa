import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { getSharp } from '../../../engines/sharp.js';
import { outputFile } from '../../_shared/output.js';
import { openInput } from '../_shared/decode.js';

const CHANNELS = ['red', 'green', 'blue'] as const;
const COLORS = ['#e53935', '#43a047', '#1e88e5'];

export default defineTool({
  id: 'histogram',
  section: 'image',
  group: 'utilities',
  summary: 'Render an RGB histogram chart and per-channel statistics.',
  description:
    'Counts every pixel of every channel (256 bins), draws the three curves (linear or log y axis) as a PNG chart, and returns mean, median, standard deviation, min and max per channel plus the raw bins.',
  input: { kind: 'file', accept: ['image/*'] },
  frames: 'first',
  derivedOutput: true,
  settings: z.object({
    scale: z.enum(['linear', 'log']).default('linear').describe('Y-axis scale.'),
  }),
  output: 'PNG chart plus JSON statistics',
  examples: ['photo.jpg --scale log -o hist.png --json'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const img = await openInput(input, ctx.workDir);
    const { data, info } = await img.autoOrient().removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
    const ch = info.channels;
    const bins = CHANNELS.map(() => new Float64Array(256));
    const gray = ch < 3;
    for (let i = 0; i < data.length; i += ch) {
      bins[0]![data[i]!]!++;
      bins[1]![data[i + (gray ? 0 : 1)]!]!++;
      bins[2]![data[i + (gray ? 0 : 2)]!]!++;
    }
    const total = info.width * info.height;
    const stats = Object.fromEntries(CHANNELS.map((name, c) => [name, channelStats(bins[c]!, total)]));
    ctx.progress(60, 'drawing');
    const sharp = await getSharp();
    const out = ctx.out('png', '-histogram');
    await sharp(Buffer.from(chartSvg(bins, s.scale)))
      .png()
      .toFile(out);
    return {
      outputs: [outputFile(out)],
      data: {
        scale: s.scale,
        width: info.width,
        height: info.height,
        pixels: total,
        channels: stats,
        bins: Object.fromEntries(CHANNELS.map((n, c) => [n, [...bins[c]!]])),
      },
    };
  },
});

function channelStats(h: Float64Array, total: number) {
  let sum = 0,
    sq = 0,
    min = -1,
    max = 0,
    median = -1,
    seen = 0;
  for (let v = 0; v < 256; v++) {
    const n = h[v]!;
    if (!n) continue;
    if (min < 0) min = v;
    max = v;
    sum += n * v;
    sq += n * v * v;
    seen += n;
    if (median < 0 && seen >= total / 2) median = v;
  }
  const mean = sum / total;
  return { mean: +mean.toFixed(3), median, stddev: +Math.sqrt(Math.max(0, sq / total - mean * mean)).toFixed(3), min, max };
}

function chartSvg(bins: Float64Array[], scale: 'linear' | 'log'): string {
  const W = 512,
    H = 256,
    pad = 24;
  const f = scale === 'log' ? (n: number) => Math.log1p(n) : (n: number) => n;
  const top = Math.max(1, ...bins.flatMap((b) => [...b].map(f)));
  const paths = bins.map((b, c) => {
    let d = `M${pad},${pad + H}`;
    for (let v = 0; v < 256; v++)
      d += ` L${pad + v * 2},${(pad + H - (f(b[v]!) / top) * H).toFixed(2)} L${pad + v * 2 + 2},${(pad + H - (f(b[v]!) / top) * H).toFixed(2)}`;
    return `<path d="${d} L${pad + W},${pad + H} Z" fill="${COLORS[c]}" fill-opacity="0.45" stroke="${COLORS[c]}" stroke-width="1"/>`;
  });
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W + 2 * pad}" height="${H + 2 * pad}"><rect width="100%" height="100%" fill="#ffffff"/>` +
    `<rect x="${pad}" y="${pad}" width="${W}" height="${H}" fill="#fafafa" stroke="#999"/>${paths.join('')}</svg>`
  );
}
