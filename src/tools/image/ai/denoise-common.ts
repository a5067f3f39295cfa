/**
 * Classical denoising for noise-removal's `quick` tier (no model): non-local means (Buades, Coll &
 * Morel 2005) in YCbCr, with the fast formulation of Darbon et al.: for each offset of the search
 * window the squared difference image is box-filtered through an integral image, so the cost is
 * O(pixels × window) whatever the patch size. Luma and chroma get their own filtering strength
 * (noise grain vs colour blotches); patch distances are measured on luma for both. Not a tool (it is not listed in ../list.ts).
 */

export interface NlmOptions {
  /** Noise σ to remove from luma, 0–255 units (0 leaves luma alone). */
  hLuma: number;
  /** Same for chroma. */
  hChroma: number;
  /** Noise σ of luma, for the patch distance (default hLuma). */
  noise?: number;
  /** Filtering strength relative to σ (Buades et al. give 0.4–0.55 for 3×3 patches); default 0.55. */
  k?: number;
  /** Patch radius (3×3 patches at 1). */
  patch?: number;
  /** Search radius (11×11 window at 5). */
  search?: number;
  signal?: AbortSignal;
  /** Fraction done 0–1, once per row of search offsets. */
  progress?: (fraction: number) => void;
}

/**
 * Filters `planes` with weights from patch distances measured on `guide` (luma): chroma blotches in
 * a flat area average out with that area's similar patches. Each plane has its own σ.
 */
function nlmPlanes(
  guide: Float32Array,
  planes: { src: Float32Array; sigma: number }[],
  w: number,
  h: number,
  guideSigma: number,
  k: number,
  pr: number,
  sr: number,
  signal?: AbortSignal,
  progress?: (fraction: number) => void,
): Float32Array[] {
  const live = planes.filter((p) => p.sigma > 0);
  if (!live.length) return planes.map((p) => p.src);
  const n = w * h;
  const acc = live.map(() => new Float32Array(n));
  const wsum = live.map(() => new Float32Array(n));
  const wmax = live.map(() => new Float32Array(n));
  const inv = live.map((p) => 1 / (k * p.sigma) ** 2);
  const diff = new Float64Array((w + 1) * (h + 1));
  const twoVar = 2 * guideSigma * guideSigma;
  for (let dy = -sr; dy <= sr; dy++) {
    signal?.throwIfAborted();
    progress?.((dy + sr) / (2 * sr + 1));
    for (let dx = -sr; dx <= sr; dx++) {
      if (dx === 0 && dy === 0) continue;
      // Integral image of (G(p) − G(p + d))², edges clamped.
      for (let y = 0; y < h; y++) {
        let row = 0;
        const yy = Math.min(h - 1, Math.max(0, y + dy));
        for (let x = 0; x < w; x++) {
          const xx = Math.min(w - 1, Math.max(0, x + dx));
          const d = guide[y * w + x]! - guide[yy * w + xx]!;
          row += d * d;
          diff[(y + 1) * (w + 1) + x + 1] = diff[y * (w + 1) + x + 1]! + row;
        }
      }
      for (let y = 0; y < h; y++) {
        const y0 = Math.max(0, y - pr);
        const y1 = Math.min(h, y + pr + 1);
        const yy = Math.min(h - 1, Math.max(0, y + dy));
        for (let x = 0; x < w; x++) {
          const x0 = Math.max(0, x - pr);
          const x1 = Math.min(w, x + pr + 1);
          const ssd = diff[y1 * (w + 1) + x1]! - diff[y0 * (w + 1) + x1]! - diff[y1 * (w + 1) + x0]! + diff[y0 * (w + 1) + x0]!;
          // Mean squared patch distance minus the 2σ² two noisy copies of one patch differ by.
          const dist = Math.max(0, ssd / ((y1 - y0) * (x1 - x0)) - twoVar);
          const p = y * w + x;
          const q = yy * w + Math.min(w - 1, Math.max(0, x + dx));
          for (let c = 0; c < live.length; c++) {
            const wgt = Math.exp(-dist * inv[c]!);
            acc[c]![p] = acc[c]![p]! + wgt * live[c]!.src[q]!;
            wsum[c]![p] = wsum[c]![p]! + wgt;
            if (wgt > wmax[c]![p]!) wmax[c]![p] = wgt;
          }
        }
      }
    }
  }
  const done = live.map((pl, c) => {
    const out = new Float32Array(n);
    for (let p = 0; p < n; p++) {
      // The centre pixel weighs as much as its best match (with weight 1 it would dominate).
      const self = wmax[c]![p]! > 0 ? wmax[c]![p]! : 1;
      out[p] = (acc[c]![p]! + self * pl.src[p]!) / (wsum[c]![p]! + self);
    }
    return out;
  });
  return planes.map((p) => (p.sigma > 0 ? done[live.indexOf(p)]! : p.src));
}

/** Non-local means on interleaved RGB (channels 3 or 4; alpha untouched), in place. */
export function nonLocalMeans(px: Uint8Array, w: number, h: number, channels: number, o: NlmOptions): void {
  const n = w * h;
  const Y = new Float32Array(n);
  const Cb = new Float32Array(n);
  const Cr = new Float32Array(n);
  for (let p = 0; p < n; p++) {
    const r = px[p * channels]!;
    const g = px[p * channels + 1]!;
    const b = px[p * channels + 2]!;
    Y[p] = 0.299 * r + 0.587 * g + 0.114 * b;
    Cb[p] = -0.168736 * r - 0.331264 * g + 0.5 * b;
    Cr[p] = 0.5 * r - 0.418688 * g - 0.081312 * b;
  }
  const pr = o.patch ?? 1;
  const sr = o.search ?? 5;
  const [y, cb, cr] = nlmPlanes(
    Y,
    [
      { src: Y, sigma: o.hLuma },
      { src: Cb, sigma: o.hChroma },
      { src: Cr, sigma: o.hChroma },
    ],
    w,
    h,
    o.noise ?? o.hLuma,
    o.k ?? 0.55,
    pr,
    sr,
    o.signal,
    o.progress,
  ) as [Float32Array, Float32Array, Float32Array];
  const c8 = (v: number) => (v <= 0 ? 0 : v >= 255 ? 255 : Math.round(v));
  for (let p = 0; p < n; p++) {
    px[p * channels] = c8(y[p]! + 1.402 * cr[p]!);
    px[p * channels + 1] = c8(y[p]! - 0.344136 * cb[p]! - 0.714136 * cr[p]!);
    px[p * channels + 2] = c8(y[p]! + 1.772 * cb[p]!);
  }
}

/** Immerkær's fast noise σ estimate on luma (0–255 units). */
export function noiseSigma(px: Uint8Array, w: number, h: number, channels: number): number {
  if (w < 3 || h < 3) return 0;
  const l = (x: number, y: number) => {
    const i = (y * w + x) * channels;
    return 0.299 * px[i]! + 0.587 * px[i + 1]! + 0.114 * px[i + 2]!;
  };
  let sum = 0;
  for (let y = 1; y < h - 1; y++) {
    for (let x = 1; x < w - 1; x++) {
      const v =
        l(x - 1, y - 1) -
        2 * l(x, y - 1) +
        l(x + 1, y - 1) -
        2 * l(x - 1, y) +
        4 * l(x, y) -
        2 * l(x + 1, y) +
        l(x - 1, y + 1) -
        2 * l(x, y + 1) +
        l(x + 1, y + 1);
      sum += Math.abs(v);
    }
  }
  return (sum * Math.sqrt(Math.PI / 2)) / (6 * (w - 2) * (h - 2));
}
