/**
 * Seam carving (Avidan & Shamir 2007) on RGBA pixels. The energy is the Sobel gradient magnitude of a
 * (pre-blurred) grey copy; magnitudes under sobelThreshold count as flat. Each step removes the
 * vertical seam of least total energy, found by dynamic programming; the energy is then recomputed
 * only next to the removed seam, which is what keeps this usable on real photos.
 * Pure functions: the worker (b-seam-worker) runs them off the main thread.
 */

export interface Plane {
  width: number;
  height: number;
  /** RGBA, width × height × 4. */
  rgba: Uint8Array;
  /** Blurred luminance, width × height. */
  grey: Float32Array;
}

export function transpose(p: Plane): Plane {
  const { width: w, height: h } = p;
  const rgba = new Uint8Array(p.rgba.length);
  const grey = new Float32Array(p.grey.length);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      const s = y * w + x;
      const d = x * h + y;
      grey[d] = p.grey[s]!;
      rgba[d * 4] = p.rgba[s * 4]!;
      rgba[d * 4 + 1] = p.rgba[s * 4 + 1]!;
      rgba[d * 4 + 2] = p.rgba[s * 4 + 2]!;
      rgba[d * 4 + 3] = p.rgba[s * 4 + 3]!;
    }
  return { width: h, height: w, rgba, grey };
}

function sobelAt(g: Float32Array, w: number, h: number, x: number, y: number, threshold: number): number {
  const at = (xx: number, yy: number) => g[Math.min(h - 1, Math.max(0, yy)) * w + Math.min(w - 1, Math.max(0, xx))]!;
  const gx = at(x + 1, y - 1) + 2 * at(x + 1, y) + at(x + 1, y + 1) - at(x - 1, y - 1) - 2 * at(x - 1, y) - at(x - 1, y + 1);
  const gy = at(x - 1, y + 1) + 2 * at(x, y + 1) + at(x + 1, y + 1) - at(x - 1, y - 1) - 2 * at(x, y - 1) - at(x + 1, y - 1);
  // Sobel on 0-255 input peaks near 1442; /4 brings it back to a 0-255-like scale for the threshold.
  const m = Math.sqrt(gx * gx + gy * gy) / 4;
  return m < threshold ? 0 : m;
}

export function energyMap(p: Plane, threshold: number): Float32Array {
  const e = new Float32Array(p.width * p.height);
  for (let y = 0; y < p.height; y++)
    for (let x = 0; x < p.width; x++) e[y * p.width + x] = sobelAt(p.grey, p.width, p.height, x, y, threshold);
  return e;
}

/** Column index of the least-energy vertical seam in every row. */
export function findSeam(e: Float32Array, w: number, h: number, cost: Float32Array, from: Int8Array): Int32Array {
  for (let x = 0; x < w; x++) cost[x] = e[x]!;
  for (let y = 1; y < h; y++) {
    const row = y * w;
    const prev = row - w;
    for (let x = 0; x < w; x++) {
      let best = cost[prev + x]!;
      let dir = 0;
      if (x > 0 && cost[prev + x - 1]! < best) {
        best = cost[prev + x - 1]!;
        dir = -1;
      }
      if (x < w - 1 && cost[prev + x + 1]! < best) {
        best = cost[prev + x + 1]!;
        dir = 1;
      }
      cost[row + x] = best + e[row + x]!;
      from[row + x] = dir;
    }
  }
  const seam = new Int32Array(h);
  let bx = 0;
  const last = (h - 1) * w;
  for (let x = 1; x < w; x++) if (cost[last + x]! < cost[last + bx]!) bx = x;
  seam[h - 1] = bx;
  for (let y = h - 1; y > 0; y--) {
    bx += from[y * w + bx]!;
    seam[y - 1] = bx;
  }
  return seam;
}

/**
 * Removes `count` vertical seams. Returns the narrower plane and, for tests and data, the original
 * column of each removed seam's first-row pixel.
 */
export function carveColumns(
  p: Plane,
  count: number,
  threshold: number,
  onProgress?: (done: number) => void,
): { plane: Plane; removedFirstRow: number[] } {
  let w = p.width;
  const h = p.height;
  const rgba = p.rgba;
  const grey = p.grey;
  const e = energyMap(p, threshold);
  // Original column of every current pixel of the first row (to report where seams were taken).
  const origCol = Array.from({ length: w }, (_, i) => i);
  const removedFirstRow: number[] = [];
  const cost = new Float32Array(w * h);
  const from = new Int8Array(w * h);
  for (let k = 0; k < count; k++) {
    const seam = findSeam(e, w, h, cost, from);
    removedFirstRow.push(origCol[seam[0]!]!);
    origCol.splice(seam[0]!, 1);
    const nw = w - 1;
    // Compact every row in place: rows shift left as the image narrows.
    for (let y = 0; y < h; y++) {
      const sx = seam[y]!;
      const src = y * w;
      const dst = y * nw;
      grey.copyWithin(dst, src, src + sx);
      grey.copyWithin(dst + sx, src + sx + 1, src + w);
      e.copyWithin(dst, src, src + sx);
      e.copyWithin(dst + sx, src + sx + 1, src + w);
      rgba.copyWithin(dst * 4, src * 4, (src + sx) * 4);
      rgba.copyWithin((dst + sx) * 4, (src + sx + 1) * 4, (src + w) * 4);
    }
    w = nw;
    // Only pixels next to the seam changed neighbours.
    for (let y = 0; y < h; y++) {
      const sx = seam[y]!;
      for (let x = Math.max(0, sx - 2); x <= Math.min(w - 1, sx + 1); x++) e[y * w + x] = sobelAt(grey, w, h, x, y, threshold);
    }
    if (onProgress && (k & 15) === 0) onProgress(k);
  }
  return {
    plane: { width: w, height: h, rgba: rgba.slice(0, w * h * 4), grey: grey.slice(0, w * h) },
    removedFirstRow,
  };
}
