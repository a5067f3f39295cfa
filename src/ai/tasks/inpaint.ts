/**
 * Filling a hole in an image — erase-object, ai-canvas-expand, restore-photo's scratches — with
 * LaMa (a model, in the host) or classical PatchMatch completion (a worker thread), in the same way:
 *
 * 1. The region worked on is the hole's bounding box plus context around it. When it is larger than
 *    the working budget (KILN_AI_INPAINT_SIDE, default 2048 px on its longer side) it is worked on at
 *    a reduced scale and the fill is scaled back; known pixels always keep their exact values.
 * 2. The region is filled in tiles of 512×512 (LaMa's input) overlapping by a context band. The tile
 *    with the most known pixels goes first, and each finished tile's pixels become known context for
 *    the tiles after it, so tiles continue one another instead of meeting at a seam. Memory is one
 *    tile's at a time; progress is reported per tile and a cancel stops between tiles.
 */
import { getSharp } from '../../engines/sharp.js';
import { runWorker } from '../../core/worker.js';
import type { FillImage } from '../classical/patchmatch.js';
import type { PatchMatchJob } from '../classical/patchmatch-worker.js';
import { LAMA_SIZE, type LamaInput, type LamaOutput } from '../models/lama.js';
import { type ModelCall, type RunInfo, runModel } from '../run-model.js';

export type InpaintMethod = 'patchmatch' | 'lama';

export interface InpaintResult {
  /** The whole image's RGB with the hole filled. */
  rgb: Uint8Array;
  method: InpaintMethod;
  /** The model's run info (LaMa only; null for the classical method). */
  info: RunInfo | null;
  tiles: number;
  /** Scale the region was worked on (1 = full resolution). */
  scale: number;
  region: { left: number; top: number; width: number; height: number } | null;
}

export interface InpaintOptions extends ModelCall {
  method: InpaintMethod;
  /** LaMa model id (lama-fp32 or lama-int8). */
  model?: string;
  /** Hole values are a first guess worth keeping (edge extension), for the classical method. */
  initFromInput?: boolean;
  /** Context around the hole's bounding box, px; default half the box's longer side, 48–512. */
  context?: number;
  /** Longest side of the region worked on (default workSide()); a larger region is scaled down. */
  maxSide?: number;
}

export const TILE = LAMA_SIZE;
const CONTEXT = 96;

export function workSide(env: NodeJS.ProcessEnv = process.env): number {
  const n = Number(env.KILN_AI_INPAINT_SIDE);
  return Number.isInteger(n) && n >= TILE ? n : 2048;
}

/** Bounding box of the non-zero mask pixels, or null. */
export function maskBox(mask: Uint8Array, w: number, h: number): { left: number; top: number; width: number; height: number } | null {
  let x0 = w;
  let y0 = h;
  let x1 = -1;
  let y1 = -1;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      if (!mask[y * w + x]) continue;
      if (x < x0) x0 = x;
      if (x > x1) x1 = x;
      if (y < y0) y0 = y;
      if (y > y1) y1 = y;
    }
  }
  return x1 < 0 ? null : { left: x0, top: y0, width: x1 - x0 + 1, height: y1 - y0 + 1 };
}

function crop(src: Uint8Array, w: number, ch: number, r: { left: number; top: number; width: number; height: number }): Uint8Array {
  const out = new Uint8Array(r.width * r.height * ch);
  for (let y = 0; y < r.height; y++) {
    const s = ((r.top + y) * w + r.left) * ch;
    out.set(src.subarray(s, s + r.width * ch), y * r.width * ch);
  }
  return out;
}

type Box = { left: number; top: number; width: number; height: number };

export type TileFiller = (tile: FillImage, index: number) => Promise<Uint8Array>;

/**
 * Fills `img` tile by tile (see the file comment); returns the filled RGB and the number of tiles run.
 * `filler` gets a region of at most `tile`×`tile` and returns its RGB with the hole filled.
 */
export async function fillInTiles(
  img: FillImage,
  filler: TileFiller,
  opts: { tile?: number; context?: number; signal?: AbortSignal; progress?: (fraction: number, stage?: string) => void } = {},
): Promise<{ rgb: Uint8Array; tiles: number }> {
  const { width: W, height: H } = img;
  const T = opts.tile ?? TILE;
  const C = Math.min(opts.context ?? CONTEXT, Math.floor(T / 4));
  const rgb = Uint8Array.from(img.rgb);
  const mask = Uint8Array.from(img.mask);
  const box = maskBox(mask, W, H);
  if (!box) return { rgb, tiles: 0 };
  const core = T - 2 * C;
  // Cores cover the hole's box; each tile is its core plus the context band, kept inside the image.
  const cores: { left: number; top: number; width: number; height: number }[] = [];
  for (let y = box.top; y < box.top + box.height; y += core) {
    for (let x = box.left; x < box.left + box.width; x += core) {
      cores.push({ left: x, top: y, width: Math.min(core, box.left + box.width - x), height: Math.min(core, box.top + box.height - y) });
    }
  }
  const regionOf = (c: (typeof cores)[number]) => {
    const width = Math.min(W, T);
    const height = Math.min(H, T);
    const left = Math.max(0, Math.min(W - width, c.left + Math.floor(c.width / 2) - Math.floor(width / 2)));
    const top = Math.max(0, Math.min(H - height, c.top + Math.floor(c.height / 2) - Math.floor(height / 2)));
    return { left, top, width, height };
  };
  const holesIn = (r: { left: number; top: number; width: number; height: number }) => {
    let n = 0;
    for (let y = r.top; y < r.top + r.height; y++) for (let x = r.left; x < r.left + r.width; x++) n += mask[y * W + x] ? 1 : 0;
    return n;
  };
  /** The core with its context band (clamped to the image) lies inside region r. */
  const inside = (o: Box, r: Box) =>
    Math.max(0, o.left - C) >= r.left &&
    Math.max(0, o.top - C) >= r.top &&
    Math.min(W, o.left + o.width + C) <= r.left + r.width &&
    Math.min(H, o.top + o.height + C) <= r.top + r.height;
  const pending = cores.filter((c) => holesIn(c) > 0);
  const total = pending.length;
  let done = 0;
  let runs = 0;
  while (pending.length) {
    opts.signal?.throwIfAborted();
    // Most known context first.
    let best = 0;
    let bestKnown = -1;
    for (let i = 0; i < pending.length; i++) {
      const r = regionOf(pending[i]!);
      const known = 1 - holesIn(r) / (r.width * r.height);
      if (known > bestKnown) {
        bestKnown = known;
        best = i;
      }
    }
    const c = pending.splice(best, 1)[0]!;
    const r = regionOf(c);
    opts.progress?.(done / total, `tile ${done + 1}/${total}`);
    const filled = await filler({ width: r.width, height: r.height, rgb: crop(rgb, W, 3, r), mask: crop(mask, W, 1, r) }, runs++);
    // This core, and every other core this tile saw with its full context band (all of them on a small image), are done.
    const covered = [c, ...pending.filter((o) => inside(o, r))];
    for (const o of covered) {
      for (let y = o.top; y < o.top + o.height; y++) {
        for (let x = o.left; x < o.left + o.width; x++) {
          const p = y * W + x;
          if (!mask[p]) continue;
          const q = ((y - r.top) * r.width + (x - r.left)) * 3;
          rgb[p * 3] = filled[q]!;
          rgb[p * 3 + 1] = filled[q + 1]!;
          rgb[p * 3 + 2] = filled[q + 2]!;
          mask[p] = 0;
        }
      }
      if (o !== c) pending.splice(pending.indexOf(o), 1);
    }
    done += covered.length;
  }
  opts.progress?.(1);
  return { rgb, tiles: runs };
}

/** Tile filler running classical PatchMatch completion in a worker thread. */
export function patchMatchFiller(signal: AbortSignal, initFromInput = false, progress?: (f: number) => void): TileFiller {
  return async (tile) => {
    const r = await runWorker<{ rgb: Uint8Array }>(
      new URL('../classical/patchmatch-worker.js', import.meta.url),
      { image: tile, options: { initFromInput } } satisfies PatchMatchJob,
      signal,
      'Inpainting',
      progress,
    );
    return r.rgb;
  };
}

/** Tile filler running LaMa in the model host; remembers the run info. */
export function lamaFiller(model: string, call: ModelCall, seen: { info: RunInfo | null }): TileFiller {
  return async (tile) => {
    const { output, info } = await runModel<LamaOutput>(
      model,
      { width: tile.width, height: tile.height, rgb: tile.rgb, mask: tile.mask } satisfies LamaInput as unknown as Record<string, unknown>,
      { dataDir: call.dataDir, signal: call.signal },
    );
    if (!seen.info) seen.info = info;
    else seen.info = { ...seen.info, runMs: seen.info.runMs + info.runMs };
    return output.rgb;
  };
}

/** Fills the hole of the whole image `img` (RGB) with `opts.method`; see the file comment. */
export async function inpaint(img: FillImage, opts: InpaintOptions): Promise<InpaintResult> {
  const { width: W, height: H } = img;
  const box = maskBox(img.mask, W, H);
  if (!box) return { rgb: Uint8Array.from(img.rgb), method: opts.method, info: null, tiles: 0, scale: 1, region: null };
  const ctxPx = opts.context ?? Math.min(512, Math.max(48, Math.round(Math.max(box.width, box.height) / 2)));
  const left = Math.max(0, box.left - ctxPx);
  const top = Math.max(0, box.top - ctxPx);
  const region = {
    left,
    top,
    width: Math.min(W, box.left + box.width + ctxPx) - left,
    height: Math.min(H, box.top + box.height + ctxPx) - top,
  };
  const scale = Math.min(1, (opts.maxSide ?? workSide()) / Math.max(region.width, region.height));
  let rgb = crop(img.rgb, W, 3, region);
  let mask = crop(img.mask, W, 1, region);
  let ww = region.width;
  let wh = region.height;
  const sharp = await getSharp();
  if (scale < 1) {
    ww = Math.max(1, Math.round(region.width * scale));
    wh = Math.max(1, Math.round(region.height * scale));
    rgb = new Uint8Array(
      await sharp(rgb, { raw: { width: region.width, height: region.height, channels: 3 } })
        .resize(ww, wh, { fit: 'fill', kernel: 'lanczos3' })
        .raw()
        .toBuffer(),
    );
    // A working pixel is a hole when any full-size pixel under it is.
    const m = await sharp(Buffer.from(mask.map((v) => (v ? 255 : 0))), { raw: { width: region.width, height: region.height, channels: 1 } })
      .resize(ww, wh, { fit: 'fill', kernel: 'linear' })
      .extractChannel(0)
      .raw()
      .toBuffer();
    mask = Uint8Array.from(m, (v) => (v > 0 ? 1 : 0));
  }
  const seen: { info: RunInfo | null } = { info: null };
  const signal = opts.signal ?? new AbortController().signal;
  const filler = opts.method === 'lama' ? lamaFiller(opts.model ?? 'lama-fp32', opts, seen) : patchMatchFiller(signal, opts.initFromInput);
  const filled = await fillInTiles({ width: ww, height: wh, rgb, mask }, filler, { signal, progress: opts.progress });
  let back = filled.rgb;
  if (scale < 1) {
    back = new Uint8Array(
      await sharp(filled.rgb, { raw: { width: ww, height: wh, channels: 3 } })
        .resize(region.width, region.height, { fit: 'fill', kernel: 'lanczos3' })
        .raw()
        .toBuffer(),
    );
  }
  const out = Uint8Array.from(img.rgb);
  for (let y = 0; y < region.height; y++) {
    for (let x = 0; x < region.width; x++) {
      const p = (region.top + y) * W + region.left + x;
      if (!img.mask[p]) continue;
      const q = (y * region.width + x) * 3;
      out[p * 3] = back[q]!;
      out[p * 3 + 1] = back[q + 1]!;
      out[p * 3 + 2] = back[q + 2]!;
    }
  }
  return { rgb: out, method: opts.method, info: seen.info, tiles: filled.tiles, scale: +scale.toFixed(4), region };
}
