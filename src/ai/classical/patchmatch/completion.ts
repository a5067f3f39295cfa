/**
 * One scale of the completion: the nearest-neighbour field from each target patch (touching the hole) to
 * a source patch (wholly known), improved by PatchMatch search, and the vote that rebuilds the hole from it.
 */
import type { Level } from './pyramid.js';

/** A small seeded generator, so a fill is reproducible. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class Completion {
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
