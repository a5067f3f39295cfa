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
import { Completion, mulberry32 } from './patchmatch/completion.js';
import { holeHalfWidth } from './patchmatch/hole.js';
import { downsample, type Level, onionPeel, upsampleInto } from './patchmatch/pyramid.js';

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
