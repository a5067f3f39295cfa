/**
 * The scales of a PatchMatch completion: an image with its hole, halved for the coarser levels, the
 * coarsest hole's first guess (onion peel) and each finer level's first guess (bilinear upsample).
 */
import { bilinearAt } from '../../models/resample.js';

export interface Level {
  w: number;
  h: number;
  img: Float32Array; // RGB
  hole: Uint8Array;
}

/** Half the image: known pixels averaged; a coarse pixel is a hole when any of its four is. */
export function downsample(l: Level): Level {
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
export function onionPeel(l: Level): void {
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

/** Bilinear upsample of `coarse`'s hole pixels into `fine`'s hole (the first guess at the finer scale). */
export function upsampleInto(coarse: Level, fine: Level): void {
  const { w, h } = fine;
  for (let y = 0; y < h; y++) {
    const cy = (y + 0.5) / 2 - 0.5;
    for (let x = 0; x < w; x++) {
      const p = y * w + x;
      if (!fine.hole[p]) continue;
      const cx = (x + 0.5) / 2 - 0.5;
      for (let c = 0; c < 3; c++) fine.img[p * 3 + c] = bilinearAt(coarse.img, coarse.w, coarse.h, 3, c, cx, cy);
    }
  }
}
