/** A second image prepared as an RGBA layer (scaled, opacity applied, clipped to the base) for sharp's composite. */
import type { InputFile } from '../../../core/tool.js';
import { getSharp } from '../../../engines/sharp.js';
import { readRgba, type Raw } from './pixels.js';

export async function loadLayer(file: InputFile, workDir: string, opts: { width?: number; opacity: number }): Promise<Raw> {
  let raw = await readRgba(file, workDir);
  if (opts.width && opts.width !== raw.width) {
    const sharp = await getSharp();
    const { data, info } = await sharp(Buffer.from(raw.data.buffer, raw.data.byteOffset, raw.data.length), {
      raw: { width: raw.width, height: raw.height, channels: 4 },
    })
      .resize({ width: opts.width })
      .raw()
      .toBuffer({ resolveWithObject: true });
    raw = { data: new Uint8ClampedArray(data.buffer, data.byteOffset, data.length), width: info.width, height: info.height };
  }
  if (opts.opacity < 1) for (let i = 3; i < raw.data.length; i += 4) raw.data[i] = raw.data[i]! * opts.opacity;
  return raw;
}

/**
 * The part of `layer` that falls inside a W×H base when its top-left corner is at (x, y) — which may be
 * negative — with where to put it; undefined when nothing overlaps.
 */
export function clipLayer(layer: Raw, x: number, y: number, W: number, H: number): (Raw & { left: number; top: number }) | undefined {
  const sx = Math.max(0, -x);
  const sy = Math.max(0, -y);
  const left = Math.max(0, x);
  const top = Math.max(0, y);
  const w = Math.min(layer.width - sx, W - left);
  const h = Math.min(layer.height - sy, H - top);
  if (w <= 0 || h <= 0) return undefined;
  if (w === layer.width && h === layer.height) return { ...layer, left, top };
  const data = new Uint8ClampedArray(w * h * 4);
  for (let r = 0; r < h; r++)
    data.set(layer.data.subarray(((r + sy) * layer.width + sx) * 4, ((r + sy) * layer.width + sx + w) * 4), r * w * 4);
  return { data, width: w, height: h, left, top };
}

/** sharp composite() entry for a clipped layer. */
export function layerInput(l: Raw & { left: number; top: number }) {
  return {
    input: Buffer.from(l.data.buffer, l.data.byteOffset, l.data.length),
    raw: { width: l.width, height: l.height, channels: 4 as const },
    left: l.left,
    top: l.top,
  };
}
