/**
 * Large images through image-to-image networks in tiles, without seams, inside a memory budget.
 *
 * The image is cut into a grid of cores (≤ `tile` input pixels a side). Each tile the network sees
 * is its core grown by half the feather overlap and by a context margin on every side that has a
 * neighbour (clamped to the image). Its output is weighted by a linear ramp across each inner core
 * border (0 → 1 over `overlap` pixels, centred on the border, so the weights of two neighbours sum to
 * one) and zero in the context margin, accumulated, and divided by the summed weight. With a margin
 * at least the network's receptive radius, every pixel that gets weight saw the same neighbourhood as
 * in one untiled run, so the blend only hides rounding; with a smaller margin the ramp feathers what
 * differs. Progress is reported per tile and the abort signal is checked between tiles.
 */
import { KilnError } from '../../core/errors.js';
import type { PredictContext } from '../model.js';

export interface TileOptions {
  /** Largest core side in input pixels. */
  tile: number;
  /** Width of the feathered blend across a tile border, in input pixels (even). */
  overlap: number;
  /** Context each tile sees beyond its blend zone, in input pixels (the network's receptive radius). */
  margin: number;
}

export interface RgbImage {
  width: number;
  height: number;
  /** Interleaved RGB, width × height × 3 bytes. */
  rgb: Uint8Array;
}

export interface TileRun {
  /** The tile's input (a region of the image, context included). */
  region: { x: number; y: number; width: number; height: number; rgb: Uint8Array };
  index: number;
  count: number;
}

/** What a network gives for one tile: interleaved RGB 0–255 (floats) of region × scale. */
export type TileFn = (t: TileRun) => Promise<Float32Array>;

interface Span {
  /** Core [a, b). */
  a: number;
  b: number;
  /** Region the network sees [from, to). */
  from: number;
  to: number;
}

/** Cores of about equal size covering [0, n), each ≤ tile, grown by overlap/2 + margin inside the image. */
export function spans(n: number, o: TileOptions): Span[] {
  const count = Math.max(1, Math.ceil(n / Math.max(1, o.tile)));
  const h = o.overlap / 2;
  const out: Span[] = [];
  for (let i = 0; i < count; i++) {
    const a = Math.round((i * n) / count);
    const b = Math.round(((i + 1) * n) / count);
    const grow = Math.ceil(h + o.margin);
    out.push({ a, b, from: a === 0 ? 0 : Math.max(0, a - grow), to: b === n ? n : Math.min(n, b + grow) });
  }
  return out;
}

/** Weight of output coordinate `u` (in input pixels) for a tile with core [a, b) in an image of size n. */
function ramp(u: number, a: number, b: number, n: number, h: number): number {
  if (h <= 0) return u >= a && u < b ? 1 : 0;
  const left = a === 0 ? 1 : Math.min(1, Math.max(0, (u - (a - h)) / (2 * h)));
  const right = b === n ? 1 : Math.min(1, Math.max(0, (b + h - u) / (2 * h)));
  return Math.min(left, right);
}

/** The default tiling of the AI tools: KILN_AI_TILE (core side, input px) or one derived from KILN_AI_TILE_MB. */
export function tileSide(bytesPerPixel: number, env: NodeJS.ProcessEnv = process.env): number {
  const side = Number(env.KILN_AI_TILE);
  if (Number.isInteger(side) && side >= 16) return side;
  const mb = Number(env.KILN_AI_TILE_MB);
  const budget = (Number.isFinite(mb) && mb >= 16 ? mb : 256) * 1024 * 1024;
  return Math.max(32, Math.floor(Math.sqrt(budget / bytesPerPixel)));
}

function crop(img: RgbImage, x: number, y: number, w: number, h: number): Uint8Array {
  const out = new Uint8Array(w * h * 3);
  for (let r = 0; r < h; r++) out.set(img.rgb.subarray(((y + r) * img.width + x) * 3, ((y + r) * img.width + x + w) * 3), r * w * 3);
  return out;
}

/** Runs `fn` on every tile of `img` and blends the outputs into one image `scale` × the input. */
export async function runTiled(img: RgbImage, scale: number, o: TileOptions, fn: TileFn, ctx: PredictContext): Promise<RgbImage> {
  const { width: W, height: H } = img;
  const OW = W * scale;
  const OH = H * scale;
  const xs = spans(W, o);
  const ys = spans(H, o);
  const count = xs.length * ys.length;
  const acc = new Float32Array(OW * OH * 3);
  const wsum = count > 1 ? new Float32Array(OW * OH) : undefined;
  const h = o.overlap / 2;
  let index = 0;
  for (const sy of ys) {
    for (const sx of xs) {
      // Let the worker's event loop run first: a cancel arrives as a message, which a chain of
      // already-resolved promises (wasm kernels answer synchronously) would never let in.
      await new Promise((resolve) => setImmediate(resolve));
      ctx.signal.throwIfAborted();
      const rw = sx.to - sx.from;
      const rh = sy.to - sy.from;
      const out = await fn({
        region: { x: sx.from, y: sy.from, width: rw, height: rh, rgb: crop(img, sx.from, sy.from, rw, rh) },
        index,
        count,
      });
      if (out.length !== rw * scale * rh * scale * 3) {
        throw new KilnError('INTERNAL', `A tile of ${rw}×${rh} gave ${out.length / 3} pixels, not ${rw * scale}×${rh * scale}.`);
      }
      // Output rows/columns of this tile that get weight: the core grown by h, inside the region.
      const x0 = Math.max(sx.from, Math.floor(sx.a - h)) * scale;
      const x1 = Math.min(sx.to, Math.ceil(sx.b + h)) * scale;
      const y0 = Math.max(sy.from, Math.floor(sy.a - h)) * scale;
      const y1 = Math.min(sy.to, Math.ceil(sy.b + h)) * scale;
      const wx = new Float32Array(x1 - x0);
      for (let X = x0; X < x1; X++) wx[X - x0] = ramp((X + 0.5) / scale, sx.a, sx.b, W, h);
      const ow = rw * scale;
      for (let Y = y0; Y < y1; Y++) {
        const wy = ramp((Y + 0.5) / scale, sy.a, sy.b, H, h);
        if (wy === 0) continue;
        const srcRow = (Y - sy.from * scale) * ow;
        for (let X = x0; X < x1; X++) {
          const w = wx[X - x0]! * wy;
          if (w === 0) continue;
          const s = (srcRow + X - sx.from * scale) * 3;
          const d = (Y * OW + X) * 3;
          acc[d] = acc[d]! + out[s]! * w;
          acc[d + 1] = acc[d + 1]! + out[s + 1]! * w;
          acc[d + 2] = acc[d + 2]! + out[s + 2]! * w;
          if (wsum) wsum[Y * OW + X] = wsum[Y * OW + X]! + w;
        }
      }
      index++;
      ctx.progress(index / count, `tile ${index}/${count}`);
    }
  }
  const rgb = new Uint8Array(OW * OH * 3);
  for (let p = 0; p < OW * OH; p++) {
    const w = wsum ? wsum[p]! : 1;
    for (let c = 0; c < 3; c++) {
      const v = w > 0 ? acc[p * 3 + c]! / w : 0;
      rgb[p * 3 + c] = v <= 0 ? 0 : v >= 255 ? 255 : Math.round(v);
    }
  }
  return { width: OW, height: OH, rgb };
}
