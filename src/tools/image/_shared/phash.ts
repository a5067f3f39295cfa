/**
 * DCT perceptual hash (pHash): 32×32 grayscale, 2-D DCT-II, the 8×8 lowest frequencies compared with their
 * median (DC excluded from the median, as in pHash, since it only carries mean brightness).
 */
import type { Sharp } from 'sharp';

const N = 32;
const COS: Float64Array = (() => {
  const t = new Float64Array(N * N);
  for (let k = 0; k < N; k++) for (let n = 0; n < N; n++) t[k * N + n] = Math.cos((Math.PI / N) * (n + 0.5) * k);
  return t;
})();

export async function perceptualHash(img: Sharp): Promise<bigint> {
  const px = await img
    .autoOrient()
    .flatten({ background: '#ffffff' })
    .resize(N, N, { fit: 'fill', kernel: 'cubic' })
    .greyscale()
    .raw()
    .toBuffer();
  return hashFromGray(px);
}

/** pixels: N×N 8-bit grayscale. */
export function hashFromGray(px: Uint8Array): bigint {
  // Only the 8 lowest rows/columns of the DCT are needed: 8×32 row pass, then 8×8 column pass.
  const rows = new Float64Array(N * 8);
  for (let y = 0; y < N; y++)
    for (let u = 0; u < 8; u++) {
      let s = 0;
      for (let x = 0; x < N; x++) s += px[y * N + x]! * COS[u * N + x]!;
      rows[y * 8 + u] = s;
    }
  const coef = new Float64Array(64);
  for (let v = 0; v < 8; v++)
    for (let u = 0; u < 8; u++) {
      let s = 0;
      for (let y = 0; y < N; y++) s += rows[y * 8 + u]! * COS[v * N + y]!;
      coef[v * 8 + u] = s;
    }
  const sorted = [...coef.subarray(1)].sort((a, b) => a - b);
  const median = (sorted[31]! + sorted[32]!) / 2;
  let h = 0n;
  for (let i = 0; i < 64; i++) h = (h << 1n) | (coef[i]! > median ? 1n : 0n);
  return h;
}

export function hammingDistance(a: bigint, b: bigint): number {
  let x = a ^ b;
  let n = 0;
  while (x) {
    x &= x - 1n;
    n++;
  }
  return n;
}
