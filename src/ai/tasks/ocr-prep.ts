/**
 * Page preparation for OCR: decode to 8-bit grey (white under transparency), estimate the skew of
 * the text lines and turn it level, and the `enhance` variant — local contrast (CLAHE) after a
 * contrast stretch and a light denoise, which lifts faint or unevenly lit scans.
 */
import type { Sharp } from 'sharp';
import { getSharp, medianRaw } from '../../engines/sharp.js';

export interface Gray {
  width: number;
  height: number;
  data: Buffer;
}

export async function toGray(img: Sharp): Promise<Gray> {
  const { data, info } = await img.clone().flatten({ background: '#ffffff' }).greyscale().raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, data: info.channels === 1 ? data : takeFirst(data, info.channels) };
}

function takeFirst(data: Buffer, channels: number): Buffer {
  const out = Buffer.alloc(data.length / channels);
  for (let i = 0; i < out.length; i++) out[i] = data[i * channels]!;
  return out;
}

/**
 * Skew in degrees (positive: text rises to the right … as sharp's rotate() measures it), from the
 * angle whose horizontal projection of dark pixels is sharpest (largest variance of row sums).
 */
export function estimateSkew(g: Gray, maxDeg = 10): number {
  const scale = Math.min(1, 900 / g.width);
  const w = Math.max(1, Math.round(g.width * scale));
  const h = Math.max(1, Math.round(g.height * scale));
  const xs: number[] = [];
  const ys: number[] = [];
  let sum = 0;
  for (let i = 0; i < g.data.length; i += 7) sum += g.data[i]!;
  const mean = sum / Math.ceil(g.data.length / 7);
  const thr = Math.min(128, mean * 0.6);
  for (let y = 0; y < h; y++) {
    const sy = Math.min(g.height - 1, Math.floor(y / scale));
    for (let x = 0; x < w; x++) {
      if (g.data[sy * g.width + Math.min(g.width - 1, Math.floor(x / scale))]! < thr) {
        xs.push(x);
        ys.push(y);
      }
    }
  }
  if (xs.length < 50) return 0;
  const score = (deg: number) => {
    const t = Math.tan((deg * Math.PI) / 180);
    const rows = new Float64Array(h + 2 * Math.ceil(w * Math.abs(Math.tan((maxDeg * Math.PI) / 180))) + 2);
    const off = (rows.length - h) / 2;
    for (let i = 0; i < xs.length; i++) rows[Math.round(ys[i]! - xs[i]! * t + off)]! += 1;
    let s2 = 0;
    for (const r of rows) s2 += r * r;
    return s2;
  };
  let best = 0;
  let bestScore = score(0);
  for (let d = -maxDeg; d <= maxDeg; d += 0.5) {
    const s = score(d);
    if (s > bestScore * 1.0001) {
      best = d;
      bestScore = s;
    }
  }
  for (let d = best - 0.4; d <= best + 0.4; d += 0.1) {
    const s = score(d);
    if (s > bestScore * 1.0001) {
      best = d;
      bestScore = s;
    }
  }
  return Math.round(best * 10) / 10;
}

/** A sharp pipeline of the grey page turned level by `deg` (white fill). */
export async function level(g: Gray, deg: number): Promise<Gray> {
  const sharp = await getSharp();
  const img = sharp(g.data, { raw: { width: g.width, height: g.height, channels: 1 } });
  if (Math.abs(deg) < 0.3) return g;
  const { data, info } = await img.rotate(deg, { background: '#ffffff' }).greyscale().raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, data: info.channels === 1 ? data : takeFirst(data, info.channels) };
}

/** The grey page turned clockwise by `deg` (a quarter turn, a half or three quarters). */
export async function turn(g: Gray, deg: 90 | 180 | 270): Promise<Gray> {
  const sharp = await getSharp();
  const { data, info } = await sharp(g.data, { raw: { width: g.width, height: g.height, channels: 1 } })
    .rotate(deg)
    .greyscale()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, data: info.channels === 1 ? data : takeFirst(data, info.channels) };
}

/** An eighth of the side, at least 16 px, at most the side itself. */
const claheWindow = (side: number) => Math.min(side, Math.max(16, Math.round(side / 8)));

export async function enhance(g: Gray): Promise<Gray> {
  const sharp = await getSharp();
  const med = await medianRaw(g.data, { width: g.width, height: g.height, channels: 1 }, 3);
  const { data, info } = await sharp(med, { raw: { width: g.width, height: g.height, channels: 1 } })
    .normalise({ lower: 1, upper: 99 })
    // CLAHE's window may not exceed the image (libvips: "hist_local: window too large").
    .clahe({ width: claheWindow(g.width), height: claheWindow(g.height), maxSlope: 3 })
    .greyscale()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, data: info.channels === 1 ? data : takeFirst(data, info.channels) };
}

export async function writePng(g: Gray, file: string): Promise<void> {
  const sharp = await getSharp();
  await sharp(g.data, { raw: { width: g.width, height: g.height, channels: 1 } })
    .png({ compressionLevel: 1 })
    .toFile(file);
}

export function grayToRgb(g: Gray): Uint8Array {
  const out = new Uint8Array(g.width * g.height * 3);
  for (let i = 0, j = 0; i < g.data.length; i++, j += 3) out[j] = out[j + 1] = out[j + 2] = g.data[i]!;
  return out;
}
