/** Raster helpers for the layout tools: oriented loading, rounded masks, cover tiles, canvas limits. */
import type { Sharp } from 'sharp';
import { KilnError } from '../../../core/errors.js';
import type { InputFile } from '../../../core/tool.js';
import { getSharp } from '../../../engines/sharp.js';
import { parseColor } from '../../_shared/color.js';
import { openInput } from './decode.js';
import { MAX_SIDE, refuseOverPixelLimit } from './pixel-limit.js';

export interface Loaded {
  /** PNG (or raw) buffer of the upright first frame. */
  buffer: Buffer;
  width: number;
  height: number;
  hasAlpha: boolean;
}

/** Decodes an input upright (EXIF orientation applied), first frame only, as a PNG buffer. */
export async function loadUpright(file: InputFile, workDir: string): Promise<Loaded> {
  const img = await openInput(file, workDir);
  const { data, info } = await img.autoOrient().png({ compressionLevel: 0 }).toBuffer({ resolveWithObject: true });
  // Grey with alpha is two channels.
  return { buffer: data, width: info.width, height: info.height, hasAlpha: info.channels === 4 || info.channels === 2 };
}

/** Throws LIMIT_EXCEEDED before a canvas larger than the pixel limit is allocated. */
export function checkCanvas(width: number, height: number, what = 'output'): void {
  if (width < 1 || height < 1) throw new KilnError('VALIDATION_ERROR', `The ${what} would be empty (${width}×${height}).`);
  refuseOverPixelLimit({ what, width, height, maxSide: MAX_SIDE });
}

export async function canvas(width: number, height: number, color: string): Promise<Sharp> {
  checkCanvas(width, height);
  const sharp = await getSharp();
  return sharp({ create: { width, height, channels: 4, background: parseColor(color) } });
}

/** An SVG white rounded rectangle: used with blend dest-in to round an image's corners. */
export function roundedMaskSvg(width: number, height: number, radius: number): Buffer {
  const r = Math.max(0, Math.min(radius, width / 2, height / 2));
  return Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="${width}" height="${height}" rx="${r}" ry="${r}" fill="#fff"/></svg>`,
  );
}

/** Rounds the corners of a PNG buffer (transparent outside). */
export async function roundCorners(png: Buffer, width: number, height: number, radius: number): Promise<Buffer> {
  if (radius <= 0) return png;
  const sharp = await getSharp();
  return sharp(png)
    .ensureAlpha()
    .composite([{ input: roundedMaskSvg(width, height, radius), blend: 'dest-in' }])
    .png()
    .toBuffer();
}

/** Scales an image to cover exactly w×h (centre crop), with optional rounded corners. */
export async function coverTile(src: Buffer, w: number, h: number, radius = 0): Promise<Buffer> {
  const sharp = await getSharp();
  const tile = await sharp(src).resize(w, h, { fit: 'cover', position: 'centre' }).ensureAlpha().png().toBuffer();
  return roundCorners(tile, w, h, radius);
}

/** A soft shadow of a rounded rectangle, as a PNG the size of the rectangle plus 2×blur on each side. */
export async function shadowPng(
  width: number,
  height: number,
  radius: number,
  blur: number,
  opacity: number,
): Promise<{ png: Buffer; pad: number }> {
  const sharp = await getSharp();
  const pad = Math.ceil(blur * 2);
  const W = width + 2 * pad;
  const H = height + 2 * pad;
  const r = Math.max(0, Math.min(radius, width / 2, height / 2));
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}"><rect x="${pad}" y="${pad}" width="${width}" height="${height}" rx="${r}" ry="${r}" fill="#000" fill-opacity="${opacity}"/></svg>`;
  let img = sharp(Buffer.from(svg));
  if (blur >= 0.3) img = img.blur(blur);
  return { png: await img.png().toBuffer(), pad };
}

/** Offset of an item of size `item` inside `space` for start/center/end alignment. */
export function align(space: number, item: number, a: 'start' | 'center' | 'end'): number {
  if (a === 'start') return 0;
  if (a === 'end') return space - item;
  return Math.floor((space - item) / 2);
}
