import { z } from 'zod';
import { KilnError } from '../../../core/errors.js';
import { defineTool } from '../../../core/tool.js';
import { readRgba, writeRaw } from '../_shared/pixels.js';

/** Analysis size: k-means on at most 128×128 pixels is fast and stable for dominant colors. */
const ANALYSIS_SIDE = 128;

export default defineTool({
  id: 'color-palette',
  section: 'image',
  group: 'utilities',
  summary: 'Extract the dominant colors of an image.',
  description:
    'k-means (k-means++ seeding with a fixed seed, so results repeat) on a downsampled copy, ignoring mostly transparent pixels. ' +
    'Colors are ordered by their share of the pixels. The answer is JSON (spec decision D24); with swatch, a PNG strip with one band per color (width proportional to its share) is written as well.',
  input: { kind: 'file', accept: ['image/*'] },
  frames: 'first',
  derivedOutput: true,
  settings: z.object({
    count: z.int().min(2).max(16).default(8).describe('Number of dominant colors.'),
    format: z.enum(['hex', 'rgb']).default('hex').describe('Color notation.'),
    swatch: z.boolean().default(false).describe('Also write a PNG swatch strip of the colors (the file output).'),
  }),
  output: 'JSON colors with shares (and a PNG swatch with swatch)',
  examples: ['photo.jpg --count 5', 'photo.jpg --swatch -o palette.png'],
  async run(ctx, { files }, s) {
    const raw = await readRgba(files[0]!, ctx.workDir, ANALYSIS_SIDE);
    const pts: number[] = [];
    for (let i = 0; i < raw.data.length; i += 4) if (raw.data[i + 3]! >= 128) pts.push(raw.data[i]!, raw.data[i + 1]!, raw.data[i + 2]!);
    const n = pts.length / 3;
    if (n === 0) throw new KilnError('UNSUPPORTED_INPUT', 'The image is fully transparent: it has no colors to extract.');
    const clusters = kmeans(Float64Array.from(pts), n, s.count);
    const colors = clusters
      .filter((c) => c.count > 0)
      .sort((a, b) => b.count - a.count)
      .map((c) => {
        const [r, g, b] = c.center.map((v) => Math.round(v)) as [number, number, number];
        const hex = '#' + [r, g, b].map((v) => v.toString(16).padStart(2, '0')).join('');
        return {
          color: s.format === 'hex' ? hex : `rgb(${r}, ${g}, ${b})`,
          hex,
          rgb: { r, g, b },
          share: +(c.count / n).toFixed(4),
          percent: +((100 * c.count) / n).toFixed(2),
        };
      });
    const data = { format: s.format, count: colors.length, colors, analysedPixels: n };
    if (!s.swatch) return { outputs: [], data };
    return { outputs: [await writeRaw(ctx, swatchStrip(colors), 'png', '-palette')], data };
  },
});

function swatchStrip(colors: { rgb: { r: number; g: number; b: number }; share: number }[]) {
  const width = 400;
  const height = 80;
  const data = new Uint8ClampedArray(width * height * 4);
  let x = 0;
  colors.forEach((c, k) => {
    const end = k === colors.length - 1 ? width : Math.min(width, x + Math.max(1, Math.round(c.share * width)));
    for (let y = 0; y < height; y++) for (let xx = x; xx < end; xx++) data.set([c.rgb.r, c.rgb.g, c.rgb.b, 255], (y * width + xx) * 4);
    x = end;
  });
  return { data, width, height };
}

interface Cluster {
  center: [number, number, number];
  count: number;
}

function kmeans(p: Float64Array, n: number, k: number): Cluster[] {
  let seed = 0x9e3779b9;
  const rnd = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 0x100000000;
  const dist2 = (i: number, c: number[]) => (p[i * 3]! - c[0]!) ** 2 + (p[i * 3 + 1]! - c[1]!) ** 2 + (p[i * 3 + 2]! - c[2]!) ** 2;
  // k-means++ seeding: spread the first centers over the colors actually present.
  const centers: number[][] = [[p[0]!, p[1]!, p[2]!]];
  const best = new Float64Array(n).fill(Infinity);
  while (centers.length < k) {
    const last = centers[centers.length - 1]!;
    let sum = 0;
    for (let i = 0; i < n; i++) {
      best[i] = Math.min(best[i]!, dist2(i, last));
      sum += best[i]!;
    }
    if (sum === 0) break; // fewer distinct colors than k
    let r = rnd() * sum;
    let pick = n - 1;
    for (let i = 0; i < n; i++)
      if ((r -= best[i]!) <= 0) {
        pick = i;
        break;
      }
    centers.push([p[pick * 3]!, p[pick * 3 + 1]!, p[pick * 3 + 2]!]);
  }
  const assign = new Int32Array(n);
  let counts = new Float64Array(centers.length);
  for (let iter = 0; iter < 30; iter++) {
    let moved = 0;
    for (let i = 0; i < n; i++) {
      let bi = 0;
      let bd = Infinity;
      for (let c = 0; c < centers.length; c++) {
        const d = dist2(i, centers[c]!);
        if (d < bd) {
          bd = d;
          bi = c;
        }
      }
      if (assign[i] !== bi || iter === 0) moved++;
      assign[i] = bi;
    }
    const sums = new Float64Array(centers.length * 3);
    counts = new Float64Array(centers.length);
    for (let i = 0; i < n; i++) {
      const c = assign[i]!;
      counts[c]!++;
      sums[c * 3] += p[i * 3]!;
      sums[c * 3 + 1] += p[i * 3 + 1]!;
      sums[c * 3 + 2] += p[i * 3 + 2]!;
    }
    centers.forEach((c, j) => {
      if (counts[j]) for (let q = 0; q < 3; q++) c[q] = sums[j * 3 + q]! / counts[j]!;
    });
    if (moved === 0) break;
  }
  return centers.map((c, j) => ({ center: c as [number, number, number], count: counts[j]! }));
}
