/** The charts, measures and runner that test/ai/upscale*.test.ts share, and the install they run on. */
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import type { RunOutcome } from '../../src/tools/run-tool.js';
import { runKept } from './run-kept.js';
import { tempDir } from '../helpers/fixtures.js';
import { installForTest } from './install-helper.js';

export const dir = tempDir('kiln-upscale-');
let dataDir = '';

/**
 * The data dir every test of the file runs on: upscale-enhance and face-detection installed, and the
 * test chart with its ½ and ¼ reductions drawn into dir. Call it from the file's before().
 */
export async function prepare(): Promise<string> {
  dataDir = await installForTest('upscale-enhance');
  await installForTest('face-detection', dataDir);
  mkdirSync(dir, { recursive: true });
  await sharp(Buffer.from(chartSvg())).png().toFile(path.join(dir, 'chart-256.png'));
  // The inputs: the chart reduced to ½ and ¼ by bicubic reduction (the degradation the networks were trained on).
  await sharp(path.join(dir, 'chart-256.png')).resize(128, 128, { kernel: 'cubic' }).png().toFile(path.join(dir, 'chart-128.png'));
  await sharp(path.join(dir, 'chart-256.png')).resize(64, 64, { kernel: 'cubic' }).png().toFile(path.join(dir, 'chart-64.png'));
  return dataDir;
}

export function run(id: string, file: string, settings: Record<string, unknown>, data = dataDir): Promise<RunOutcome & { file?: string }> {
  return runKept(dir, data, id, file, settings);
}

export async function rgb(file: string) {
  const { data, info } = await sharp(file).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data: new Uint8Array(data.buffer, data.byteOffset, data.length), width: info.width, height: info.height };
}

export function psnr(a: Uint8Array, b: Uint8Array): number {
  let se = 0;
  for (let i = 0; i < a.length; i++) se += (a[i]! - b[i]!) ** 2;
  return 10 * Math.log10((255 * 255) / (se / a.length));
}

/**
 * A test chart, 256×256: bars of two periods (10 and 16 px, above the inputs' Nyquist limit so
 * no method is rewarded for aliasing), a rotated square (slanted edges), rings, a disc and text.
 */
export function chartSvg(S = 256): string {
  const bars = [10, 16]
    .map((p, k) =>
      Array.from(
        { length: Math.floor(96 / p) },
        (_, i) => `<rect x="${8 + i * p}" y="${8 + k * 40}" width="${p / 2}" height="32" fill="#111"/>`,
      ).join(''),
    )
    .join('');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${S}" height="${S}"><rect width="${S}" height="${S}" fill="#f4f1e8"/>${bars}
    <rect x="150" y="20" width="70" height="70" fill="#234" transform="rotate(12 185 55)"/>
    <circle cx="64" cy="170" r="40" fill="none" stroke="#1a3" stroke-width="5"/><circle cx="64" cy="170" r="18" fill="#c22"/>
    <text x="120" y="150" font-family="sans-serif" font-size="28" fill="#000">kiln 4x</text>
    <text x="120" y="190" font-family="serif" font-size="18" fill="#226">Upscale &amp; test</text>
    <text x="10" y="240" font-family="sans-serif" font-size="14" fill="#000">The quick brown fox jumps over</text></svg>`;
}

/** Sobel gradient energy per pixel of luma. */
export function gradients(px: Uint8Array, w: number, h: number): Float64Array {
  const l = (x: number, y: number) => {
    const i = (y * w + x) * 3;
    return 0.299 * px[i]! + 0.587 * px[i + 1]! + 0.114 * px[i + 2]!;
  };
  const g = new Float64Array(w * h);
  for (let y = 1; y < h - 1; y++) {
    for (let x = 1; x < w - 1; x++) {
      const gx = l(x + 1, y - 1) + 2 * l(x + 1, y) + l(x + 1, y + 1) - l(x - 1, y - 1) - 2 * l(x - 1, y) - l(x - 1, y + 1);
      const gy = l(x - 1, y + 1) + 2 * l(x, y + 1) + l(x + 1, y + 1) - l(x - 1, y - 1) - 2 * l(x, y - 1) - l(x + 1, y - 1);
      g[y * w + x] = gx * gx + gy * gy;
    }
  }
  return g;
}

/**
 * Edge energy: the mean squared Sobel gradient over the whole image, and over the chart's edges
 * only (the 10 % of pixels where the original's gradient is strongest): ringing beside an edge
 * raises the first, only a steeper edge raises the second.
 */
export function edgeEnergy(px: Uint8Array, truth: Float64Array, w: number, h: number): { all: number; edges: number } {
  const g = gradients(px, w, h);
  const thr = [...truth].sort((a, b) => b - a)[Math.floor(truth.length * 0.1)]!;
  let all = 0;
  let edges = 0;
  let n = 0;
  for (let i = 0; i < g.length; i++) {
    all += g[i]!;
    if (truth[i]! >= thr) {
      edges += g[i]!;
      n++;
    }
  }
  return { all: all / g.length, edges: edges / n };
}

/** A 96×96 checkerboard under seeded Gaussian-like noise (σ ≈ 20), written once to dir/noisy.png. */
export async function noisyChecker(): Promise<string> {
  const noisy = path.join(dir, 'noisy.png');
  if (existsSync(noisy)) return noisy;
  const N = 96;
  const b = Buffer.alloc(N * N * 3);
  let seed = 7;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  for (let y = 0; y < N; y++)
    for (let x = 0; x < N; x++) {
      const base = ((x >> 4) + (y >> 4)) % 2 ? 190 : 70;
      for (let c = 0; c < 3; c++) {
        let g = 0;
        for (let k = 0; k < 6; k++) g += rnd();
        b[(y * N + x) * 3 + c] = Math.max(0, Math.min(255, Math.round(base + (g - 3) * 20)));
      }
    }
  await sharp(b, { raw: { width: N, height: N, channels: 3 } })
    .png()
    .toFile(noisy);
  return noisy;
}
