/**
 * Classical exemplar inpainting without a model: multi-scale PatchMatch completion (Wexler, Shechtman
 * and Irani's "space-time completion" EM scheme with Barnes et al.'s PatchMatch as the nearest-
 * neighbour search). Every hole pixel is rebuilt from patches copied from the known part of the
 * image, coarse to fine, so textures continue across the hole; known pixels never change.
 *
 * Good for small and thin holes (an object on a textured background, scratches, a watermark) and for
 * the `fast` tier of canvas expansion; a large hole across structure needs a model (LaMa).
 * Pure computation on typed arrays: callers run it in a worker (see patchmatch-worker.ts).
 */

export interface FillImage {
  width: number;
  height: number;
  /** Interleaved RGB, width × height × 3. Hole pixels may hold a first guess (see `initFromInput`). */
  rgb: Uint8Array;
  /** width × height; non-zero marks a hole pixel. */
  mask: Uint8Array;
}

export interface PatchMatchOptions {
  /** Patch radius (patch side 2r+1); default 3 (7×7). */
  radius?: number;
  /** Use the hole's pixel values as the first guess at the coarsest scale (edge extension); default: onion-peel fill. */
  initFromInput?: boolean;
  /** Seed of the random search (results are reproducible). */
  seed?: number;
  /** fraction 0-1 done. */
  progress?: (fraction: number) => void;
  /** Checked between iterations. */
  shouldStop?: () => boolean;
}

interface Level {
  w: number;
  h: number;
  img: Float32Array; // RGB
  hole: Uint8Array;
}

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Half the image: known pixels averaged; a coarse pixel is a hole when any of its four is. */
function downsample(l: Level): Level {
  const w = Math.max(1, l.w >> 1);
  const h = Math.max(1, l.h >> 1);
  const img = new Float32Array(w * h * 3);
  const hole = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      let r = 0;
      let g = 0;
      let b = 0;
      let n = 0;
      let anyHole = 0;
      for (let dy = 0; dy < 2; dy++) {
        const sy = Math.min(l.h - 1, 2 * y + dy);
        for (let dx = 0; dx < 2; dx++) {
          const sx = Math.min(l.w - 1, 2 * x + dx);
          const i = sy * l.w + sx;
          anyHole |= l.hole[i]!;
          r += l.img[i * 3]!;
          g += l.img[i * 3 + 1]!;
          b += l.img[i * 3 + 2]!;
          n++;
        }
      }
      const o = y * w + x;
      hole[o] = anyHole ? 1 : 0;
      img[o * 3] = r / n;
      img[o * 3 + 1] = g / n;
      img[o * 3 + 2] = b / n;
    }
  }
  return { w, h, img, hole };
}

/** Fills the hole by repeatedly averaging the known 8-neighbours of its boundary pixels. */
function onionPeel(l: Level): void {
  const { w, h, img } = l;
  const known = Uint8Array.from(l.hole, (v) => (v ? 0 : 1));
  let todo: number[] = [];
  for (let i = 0; i < w * h; i++) if (!known[i]) todo.push(i);
  while (todo.length) {
    const next: number[] = [];
    const done: number[] = [];
    for (const i of todo) {
      const x = i % w;
      const y = (i / w) | 0;
      let r = 0;
      let g = 0;
      let b = 0;
      let n = 0;
      for (let dy = -1; dy <= 1; dy++) {
        const yy = y + dy;
        if (yy < 0 || yy >= h) continue;
        for (let dx = -1; dx <= 1; dx++) {
          const xx = x + dx;
          if (xx < 0 || xx >= w || (!dx && !dy)) continue;
          const j = yy * w + xx;
          if (!known[j]) continue;
          r += img[j * 3]!;
          g += img[j * 3 + 1]!;
          b += img[j * 3 + 2]!;
          n++;
        }
      }
      if (n) {
        img[i * 3] = r / n;
        img[i * 3 + 1] = g / n;
        img[i * 3 + 2] = b / n;
        done.push(i);
      } else next.push(i);
    }
    if (!done.length) break; // no known pixel at all
    for (const i of done) known[i] = 1;
    todo = next;
  }
}

class Completion {
  readonly P: number;
  /** Centres whose whole patch is known (sources). */
  readonly valid: Uint8Array;
  readonly sources: Int32Array;
  /** Pixels whose patch touches the hole (targets), and their nearest source centre and distance. */
  readonly targets: Int32Array;
  readonly nnf: Int32Array;
  readonly dist: Float64Array;

  constructor(
    readonly l: Level,
    readonly r: number,
    readonly rand: () => number,
  ) {
    const { w, h, hole } = l;
    this.P = 2 * r + 1;
    // Hole grown by r: targets; integral image of the hole: sources.
    const integ = new Int32Array((w + 1) * (h + 1));
    for (let y = 0; y < h; y++) {
      let row = 0;
      for (let x = 0; x < w; x++) {
        row += hole[y * w + x]!;
        integ[(y + 1) * (w + 1) + x + 1] = integ[y * (w + 1) + x + 1]! + row;
      }
    }
    const holeIn = (x0: number, y0: number, x1: number, y1: number) =>
      integ[y1 * (w + 1) + x1]! - integ[y0 * (w + 1) + x1]! - integ[y1 * (w + 1) + x0]! + integ[y0 * (w + 1) + x0]!;
    this.valid = new Uint8Array(w * h);
    const src: number[] = [];
    const tgt: number[] = [];
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        const x0 = Math.max(0, x - r);
        const y0 = Math.max(0, y - r);
        const x1 = Math.min(w, x + r + 1);
        const y1 = Math.min(h, y + r + 1);
        const n = holeIn(x0, y0, x1, y1);
        if (n > 0) tgt.push(y * w + x);
        else if (x >= r && y >= r && x < w - r && y < h - r) {
          this.valid[y * w + x] = 1;
          src.push(y * w + x);
        }
      }
    }
    this.sources = Int32Array.from(src);
    this.targets = Int32Array.from(tgt);
    this.nnf = new Int32Array(tgt.length);
    this.dist = new Float64Array(tgt.length);
  }

  /** Sum of squared differences of the patches around target t and source s, stopping above `cap`. */
  distance(t: number, s: number, cap: number): number {
    const { w, h, img } = this.l;
    const r = this.r;
    const tx = t % w;
    const ty = (t / w) | 0;
    const sx = s % w;
    const sy = (s / w) | 0;
    const nTotal = (Math.min(h - 1, ty + r) - Math.max(0, ty - r) + 1) * (Math.min(w - 1, tx + r) - Math.max(0, tx - r) + 1);
    const limit = cap * nTotal;
    let d = 0;
    let n = 0;
    for (let dy = -r; dy <= r; dy++) {
      const y = ty + dy;
      if (y < 0 || y >= h) continue;
      const trow = y * w;
      const srow = (sy + dy) * w;
      for (let dx = -r; dx <= r; dx++) {
        const x = tx + dx;
        if (x < 0 || x >= w) continue;
        const a = (trow + x) * 3;
        const b = (srow + sx + dx) * 3;
        const e0 = img[a]! - img[b]!;
        const e1 = img[a + 1]! - img[b + 1]!;
        const e2 = img[a + 2]! - img[b + 2]!;
        d += e0 * e0 + e1 * e1 + e2 * e2;
        n++;
      }
      if (d > limit) return Number.POSITIVE_INFINITY;
    }
    return d / n;
  }

  randomSource(): number {
    return this.sources[Math.floor(this.rand() * this.sources.length)]!;
  }

  initRandom(): void {
    for (let i = 0; i < this.targets.length; i++) this.nnf[i] = this.randomSource();
  }

  /** NNF from the coarser level's: offsets doubled, invalid sources replaced by random ones. */
  initFrom(coarse: Completion): void {
    const { w, h } = this.l;
    const cw = coarse.l.w;
    const ch = coarse.l.h;
    const map = new Int32Array(cw * ch).fill(-1);
    for (let i = 0; i < coarse.targets.length; i++) map[coarse.targets[i]!] = coarse.nnf[i]!;
    for (let i = 0; i < this.targets.length; i++) {
      const t = this.targets[i]!;
      const x = t % w;
      const y = (t / w) | 0;
      const cx = Math.min(cw - 1, x >> 1);
      const cy = Math.min(ch - 1, y >> 1);
      const cs = map[cy * cw + cx]!;
      let s = -1;
      if (cs >= 0) {
        const sx = 2 * (cs % cw) + (x - 2 * cx);
        const sy = 2 * ((cs / cw) | 0) + (y - 2 * cy);
        if (sx >= 0 && sy >= 0 && sx < w && sy < h && this.valid[sy * w + sx]) s = sy * w + sx;
      }
      this.nnf[i] = s >= 0 ? s : this.randomSource();
    }
  }

  /** One PatchMatch pass: propagation from the previous neighbours (alternating scan order) and random search. */
  search(pass: number): void {
    const { w, h } = this.l;
    const n = this.targets.length;
    const index = new Int32Array(w * h).fill(-1);
    for (let i = 0; i < n; i++) index[this.targets[i]!] = i;
    for (let i = 0; i < n; i++) this.dist[i] = this.distance(this.targets[i]!, this.nnf[i]!, Number.POSITIVE_INFINITY);
    const forward = pass % 2 === 0;
    const step = forward ? 1 : -1;
    const maxR = Math.max(w, h);
    for (let k = 0; k < n; k++) {
      const i = forward ? k : n - 1 - k;
      const t = this.targets[i]!;
      const tx = t % w;
      const ty = (t / w) | 0;
      let best = this.nnf[i]!;
      let bestD = this.dist[i]!;
      const tryS = (s: number) => {
        if (s === best || !this.valid[s]) return;
        const d = this.distance(t, s, bestD);
        if (d < bestD) {
          bestD = d;
          best = s;
        }
      };
      // Propagation: the neighbour's match, shifted by one.
      const nx = tx - step;
      if (nx >= 0 && nx < w) {
        const j = index[ty * w + nx]!;
        if (j >= 0) {
          const s = this.nnf[j]! + step;
          const sx = s % w;
          if (sx >= 0 && sx < w) tryS(s);
        }
      }
      const ny = ty - step;
      if (ny >= 0 && ny < h) {
        const j = index[ny * w + tx]!;
        if (j >= 0) {
          const s = this.nnf[j]! + step * w;
          if (s >= 0 && s < w * h) tryS(s);
        }
      }
      // Random search around the current best, halving the radius.
      const bx = best % w;
      const by = (best / w) | 0;
      for (let rad = maxR; rad >= 1; rad >>= 1) {
        const sx = Math.round(bx + (this.rand() * 2 - 1) * rad);
        const sy = Math.round(by + (this.rand() * 2 - 1) * rad);
        if (sx < 0 || sy < 0 || sx >= w || sy >= h) continue;
        tryS(sy * w + sx);
      }
      this.nnf[i] = best;
      this.dist[i] = bestD;
    }
  }

  /**
   * Voting: each hole pixel becomes the weighted mean of what every overlapping target patch's match
   * puts there; better matches weigh more. Returns the mean change per hole pixel.
   */
  vote(): number {
    const { w, h, img, hole } = this.l;
    const r = this.r;
    const acc = new Float64Array(w * h * 4);
    const ds = Array.from(this.dist)
      .filter(Number.isFinite)
      .sort((a, b) => a - b);
    const sigma2 = Math.max(1, ds.length ? ds[Math.floor(ds.length * 0.75)]! : 1);
    for (let i = 0; i < this.targets.length; i++) {
      const t = this.targets[i]!;
      const s = this.nnf[i]!;
      const d = this.dist[i]!;
      const wgt = Number.isFinite(d) ? Math.exp(-d / (2 * sigma2)) + 1e-6 : 1e-6;
      const tx = t % w;
      const ty = (t / w) | 0;
      const sx = s % w;
      const sy = (s / w) | 0;
      for (let dy = -r; dy <= r; dy++) {
        const y = ty + dy;
        if (y < 0 || y >= h) continue;
        for (let dx = -r; dx <= r; dx++) {
          const x = tx + dx;
          if (x < 0 || x >= w) continue;
          const p = y * w + x;
          if (!hole[p]) continue;
          const q = ((sy + dy) * w + sx + dx) * 3;
          acc[p * 4] += wgt * img[q]!;
          acc[p * 4 + 1] += wgt * img[q + 1]!;
          acc[p * 4 + 2] += wgt * img[q + 2]!;
          acc[p * 4 + 3] += wgt;
        }
      }
    }
    let change = 0;
    let count = 0;
    for (let p = 0; p < w * h; p++) {
      if (!hole[p] || !acc[p * 4 + 3]) continue;
      const n = acc[p * 4 + 3]!;
      for (let c = 0; c < 3; c++) {
        const v = acc[p * 4 + c]! / n;
        change += Math.abs(v - img[p * 3 + c]!);
        img[p * 3 + c] = v;
      }
      count++;
    }
    return count ? change / (count * 3) : 0;
  }
}

/** Bilinear upsample of `coarse`'s hole pixels into `fine`'s hole (the first guess at the finer scale). */
function upsampleInto(coarse: Level, fine: Level): void {
  const { w, h } = fine;
  for (let y = 0; y < h; y++) {
    const cy = Math.min(coarse.h - 1, Math.max(0, (y + 0.5) / 2 - 0.5));
    const y0 = Math.floor(cy);
    const y1 = Math.min(coarse.h - 1, y0 + 1);
    const fy = cy - y0;
    for (let x = 0; x < w; x++) {
      const p = y * w + x;
      if (!fine.hole[p]) continue;
      const cx = Math.min(coarse.w - 1, Math.max(0, (x + 0.5) / 2 - 0.5));
      const x0 = Math.floor(cx);
      const x1 = Math.min(coarse.w - 1, x0 + 1);
      const fx = cx - x0;
      for (let c = 0; c < 3; c++) {
        const a = coarse.img[(y0 * coarse.w + x0) * 3 + c]!;
        const b = coarse.img[(y0 * coarse.w + x1) * 3 + c]!;
        const d = coarse.img[(y1 * coarse.w + x0) * 3 + c]!;
        const e = coarse.img[(y1 * coarse.w + x1) * 3 + c]!;
        fine.img[p * 3 + c] = (a * (1 - fx) + b * fx) * (1 - fy) + (d * (1 - fx) + e * fx) * fy;
      }
    }
  }
}

/** Largest distance from a hole pixel to the nearest known pixel (chamfer 3-4 / 3), in pixels. */
export function holeHalfWidth(mask: Uint8Array, w: number, h: number): number {
  const INF = 1 << 29;
  const d = new Int32Array(w * h);
  for (let i = 0; i < w * h; i++) d[i] = mask[i] ? INF : 0;
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      if (!d[i]) continue;
      let v = d[i]!;
      if (x > 0) v = Math.min(v, d[i - 1]! + 3);
      if (y > 0) {
        v = Math.min(v, d[i - w]! + 3);
        if (x > 0) v = Math.min(v, d[i - w - 1]! + 4);
        if (x < w - 1) v = Math.min(v, d[i - w + 1]! + 4);
      }
      d[i] = v;
    }
  let max = 0;
  for (let y = h - 1; y >= 0; y--)
    for (let x = w - 1; x >= 0; x--) {
      const i = y * w + x;
      if (!d[i]) continue;
      let v = d[i]!;
      if (x < w - 1) v = Math.min(v, d[i + 1]! + 3);
      if (y < h - 1) {
        v = Math.min(v, d[i + w]! + 3);
        if (x < w - 1) v = Math.min(v, d[i + w + 1]! + 4);
        if (x > 0) v = Math.min(v, d[i + w - 1]! + 4);
      }
      d[i] = v;
      if (v < INF && v > max) max = v;
    }
  return max / 3;
}

/** Fills the hole of `input` and returns the new RGB (known pixels unchanged). */
export function inpaintPatchMatch(input: FillImage, opts: PatchMatchOptions = {}): Uint8Array {
  const r = opts.radius ?? 3;
  const P = 2 * r + 1;
  const { width: W, height: H } = input;
  const out = Uint8Array.from(input.rgb);
  let holeCount = 0;
  for (let i = 0; i < W * H; i++) if (input.mask[i]) holeCount++;
  if (!holeCount) return out;
  if (holeCount === W * H) return out; // nothing to copy from

  const base: Level = { w: W, h: H, img: Float32Array.from(input.rgb), hole: Uint8Array.from(input.mask, (v) => (v ? 1 : 0)) };
  // Pyramid: down while the hole is thicker than a patch and enough known patches remain.
  const levels: Level[] = [base];
  const half = holeHalfWidth(base.hole, W, H);
  for (let k = 1; ; k++) {
    const prev = levels[levels.length - 1]!;
    if (half / 2 ** k < 1.5 || Math.min(prev.w, prev.h) / 2 < 4 * P) break;
    const next = downsample(prev);
    let known = 0;
    for (let i = 0; i < next.w * next.h; i++) if (!next.hole[i]) known++;
    if (known < 4 * P * P) break;
    levels.push(next);
  }
  const rand = mulberry32(opts.seed ?? 1);
  const coarsest = levels[levels.length - 1]!;
  if (!opts.initFromInput) onionPeel(coarsest);

  // Work per level ~ its pixels; report by that.
  const weights = levels.map((l) => l.w * l.h);
  const total = weights.reduce((a, b) => a + b, 0);
  let done = 0;
  let prev: Completion | undefined;
  for (let li = levels.length - 1; li >= 0; li--) {
    const l = levels[li]!;
    if (li < levels.length - 1) upsampleInto(levels[li + 1]!, l);
    const c = new Completion(l, r, rand);
    if (!c.sources.length) {
      // No whole known patch at this scale: keep the smooth guess and go finer.
      prev = undefined;
      done += weights[li]!;
      continue;
    }
    if (prev) c.initFrom(prev);
    else c.initRandom();
    const iterations = li === levels.length - 1 ? 10 : li === 0 ? 4 : 6;
    for (let it = 0; it < iterations; it++) {
      if (opts.shouldStop?.()) throw new Error('stopped');
      c.search(it * 2);
      c.search(it * 2 + 1);
      const change = c.vote();
      if (change < 0.5) break;
    }
    done += weights[li]!;
    opts.progress?.(done / total);
    prev = c;
  }
  for (let p = 0; p < W * H; p++) {
    if (!input.mask[p]) continue;
    for (let ch = 0; ch < 3; ch++) out[p * 3 + ch] = Math.max(0, Math.min(255, Math.round(base.img[p * 3 + ch]!)));
  }
  return out;
}
