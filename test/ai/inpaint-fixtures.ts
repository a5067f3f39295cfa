import path from 'node:path';
import sharp from 'sharp';
import type { RunOutcome } from '../../src/tools/run-tool.js';
import { runKept } from './run-kept.js';
import { tempDir } from '../helpers/fixtures.js';

export const dir = tempDir('kiln-inpaint-');
export const emptyData = tempDir('kiln-inpaint-nodata-');

/** A deterministic textured "photo": diagonal waves in colour plus fine noise. */
export function texture(W: number, H: number, seed = 7): Buffer {
  let s = seed;
  const rnd = () => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s / 0x7fffffff;
  };
  const rgb = Buffer.alloc(W * H * 3);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const i = (y * W + x) * 3;
      const w = Math.sin((x + y) * 0.35) * 50;
      const n = (rnd() - 0.5) * 16;
      rgb[i] = 120 + w + n;
      rgb[i + 1] = 140 + w * 0.5 + n;
      rgb[i + 2] = 90 - w * 0.3 + n;
    }
  }
  return rgb;
}

export async function png(name: string, data: Buffer, W: number, H: number, channels: 1 | 3 | 4 = 3): Promise<string> {
  const file = path.join(dir, name);
  await sharp(data, { raw: { width: W, height: H, channels } })
    .png()
    .toFile(file);
  return file;
}

export async function rgbOf(file: string | Buffer) {
  const { data, info } = await sharp(file).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

export function run(
  id: string,
  file: string,
  settings: Record<string, unknown>,
  extra: Record<string, string> = {},
  dataDir = emptyData,
): Promise<RunOutcome & { file?: string }> {
  return runKept(dir, dataDir, id, file, settings, extra);
}

/** Mean absolute difference per channel over the pixels `where` selects. */
export function mae(a: Uint8Array, b: Uint8Array, n: number, where: (p: number) => boolean): number {
  let e = 0;
  let k = 0;
  for (let p = 0; p < n; p++) {
    if (!where(p)) continue;
    for (let c = 0; c < 3; c++) e += Math.abs(a[p * 3 + c]! - b[p * 3 + c]!);
    k += 3;
  }
  return e / k;
}

/** Object on the texture: a red disc of radius R at (cx, cy); returns clean, with object, and the mask. */
export async function scene(W: number, H: number, cx: number, cy: number, R: number) {
  const clean = texture(W, H);
  const withObj = Buffer.from(clean);
  const mask = Buffer.alloc(W * H);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      if ((x - cx) ** 2 + (y - cy) ** 2 > R * R) continue;
      const i = (y * W + x) * 3;
      withObj[i] = 240;
      withObj[i + 1] = 20;
      withObj[i + 2] = 30;
      mask[y * W + x] = 255;
    }
  }
  return { clean, withObj, mask };
}
