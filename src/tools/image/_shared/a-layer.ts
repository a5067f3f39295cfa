/** A second image prepared as an RGBA layer (scaled, opacity applied, clipped to the base) for sharp's composite. */
import type { InputFile } from '../../../core/tool.js';
import { getSharp } from '../../../engines/sharp.js';
import { readRgba, type Raw } from './a-pixels.js';

export async function loadLayer(file: InputFile, workDir: string, opts: { width?: number; opacity: number }): Promise<Raw> {
  let raw = await readRgba(file, workDir);
  if (opts.width && opts.width !== raw.width) {
    const sharp = await getSharp();
    const { data, info } = await sharp(Buffer.from(raw.data.buffer, raw.data.byteOffset, raw.data.length), { raw: { width: raw.width, height: raw.height, channels: 4 } })
      .resize({ width: opts.width })
      .raw()
      .toBuffer({ resolveWithObject: true });
    raw = { data: new Uint8ClampedArray(data.buffer, data.byteOffset, data.length), width: info.width, height: info.height };
  }
  if (opts.opacity < 1) for (let i = 3; i < raw.data.length; i += 4) raw.data[i] = raw.data[i]! * opts.opacity;
  return raw;
}

/** The part of `layer` that falls inside a W×H base when its top-left corner is at (x, y); undefined when none does. */
export function clipLayer(layer: Raw, x: number, y: number, W: number, H: number): Raw | undefined {
  const w = Math.min(layer.width, W - x);
  const h = Math.min(layer.height, H - y);
  if (w <= 0 || h <= 0) return undefined;
  if (w === layer.width && h === layer.height) return layer;
  const data = new Uint8ClampedArray(w * h * 4);
  for (let r = 0; r < h; r++) data.set(layer.data.subarray(r * layer.width * 4, (r * layer.width + w) * 4), r * w * 4);
  return { data, width: w, height: h };
}

export function layerInput(l: Raw) {
  return { input: Buffer.from(l.data.buffer, l.data.byteOffset, l.data.length), raw: { width: l.width, height: l.height, channels: 4 as const } };
}
