/**
 * The steps of restore-photo that are not inpainting or colorization: finding scratches (with the
 * scratch-detection network in tiles, or classically) and denoising.
 */
import { medianRaw } from '../../engines/sharp.js';
import { reflect } from '../models/lama.js';
import { SCRATCH_TILE, type ScratchOutput } from '../models/scratch-detection.js';
import { type ModelCall, type RunInfo, runModel } from '../run-model.js';

/**
 * Scratch mask (0/1) from the network, tile by tile: 512×512 tiles overlapping by 32 px on each side,
 * each pixel taken from the tile it is farthest inside (no seams); tiles at the border are padded by
 * reflection. Progress per tile; a cancel stops between tiles.
 */
export async function detectScratchesModel(
  grey: Uint8Array,
  W: number,
  H: number,
  threshold: number,
  call: ModelCall,
): Promise<{ mask: Uint8Array; info: RunInfo; tiles: number }> {
  const S = SCRATCH_TILE;
  const O = 32;
  const step = S - 2 * O;
  const mask = new Uint8Array(W * H);
  const xs: number[] = [];
  const ys: number[] = [];
  for (let x = 0; x < W; x += step) xs.push(x);
  for (let y = 0; y < H; y += step) ys.push(y);
  const total = xs.length * ys.length;
  let done = 0;
  let info: RunInfo | undefined;
  const cut = Math.round(threshold * 255);
  for (const cy of ys) {
    for (const cx of xs) {
      call.signal?.throwIfAborted();
      call.progress?.(done / total, `scratches: tile ${done + 1}/${total}`);
      // The tile: core [cx, cx+step) with O of context each side.
      const ox = cx - O;
      const oy = cy - O;
      const tile = new Uint8Array(S * S);
      for (let y = 0; y < S; y++) {
        const sy = reflect(oy + y, H);
        for (let x = 0; x < S; x++) tile[y * S + x] = grey[sy * W + reflect(ox + x, W)]!;
      }
      const r = await runModel<ScratchOutput>('scratch-detection', { size: S, grey: tile }, { dataDir: call.dataDir, signal: call.signal });
      info = info ? { ...info, runMs: info.runMs + r.info.runMs } : r.info;
      for (let y = cy; y < Math.min(H, cy + step); y++) {
        for (let x = cx; x < Math.min(W, cx + step); x++) {
          if (r.output.prob[(y - oy) * S + (x - ox)]! >= cut) mask[y * W + x] = 1;
        }
      }
      done++;
    }
  }
  call.progress?.(1);
  return { mask, info: info!, tiles: total };
}

/**
 * Classical scratch and dust detection: pixels that differ from their 7×7 median by more than
 * `threshold` grey levels, kept where they form thin marks (mean thickness ≤ 4 px) of at least 6
 * pixels — scratches, hairs and dust are thin, picture content is not.
 */
export async function detectScratchesClassical(grey: Uint8Array, W: number, H: number, threshold: number): Promise<Uint8Array> {
  const med = await medianRaw(grey, { width: W, height: H, channels: 1 }, 7);
  const cand = new Uint8Array(W * H);
  for (let p = 0; p < W * H; p++) if (Math.abs(grey[p]! - med[p]!) > threshold) cand[p] = 1;
  // Connected components (8-neighbourhood), judged by size and thickness.
  const mask = new Uint8Array(W * H);
  const seen = new Uint8Array(W * H);
  const stack: number[] = [];
  const comp: number[] = [];
  for (let s = 0; s < W * H; s++) {
    if (!cand[s] || seen[s]) continue;
    comp.length = 0;
    stack.push(s);
    seen[s] = 1;
    let x0 = W;
    let x1 = 0;
    let y0 = H;
    let y1 = 0;
    while (stack.length) {
      const p = stack.pop()!;
      comp.push(p);
      const x = p % W;
      const y = (p / W) | 0;
      if (x < x0) x0 = x;
      if (x > x1) x1 = x;
      if (y < y0) y0 = y;
      if (y > y1) y1 = y;
      for (let dy = -1; dy <= 1; dy++) {
        const yy = y + dy;
        if (yy < 0 || yy >= H) continue;
        for (let dx = -1; dx <= 1; dx++) {
          const xx = x + dx;
          if (xx < 0 || xx >= W) continue;
          const q = yy * W + xx;
          if (cand[q] && !seen[q]) {
            seen[q] = 1;
            stack.push(q);
          }
        }
      }
    }
    const length = Math.hypot(x1 - x0 + 1, y1 - y0 + 1);
    if (comp.length >= 6 && comp.length / length <= 4) for (const p of comp) mask[p] = 1;
  }
  return mask;
}
