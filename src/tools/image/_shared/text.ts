/**
 * Text rendered by Pango (sharp's text input): real line wrapping, font fallback, and auto-fit to a box.
 * Outlines are made by dilating the glyph coverage with a disc, which works for every font.
 */
import { getSharp } from '../../../engines/sharp.js';
import type { Raw } from './pixels.js';
import { parseColor } from '../../_shared/color.js';
import { xmlEscape } from './xml.js';

export interface TextSpec {
  text: string;
  /** Pango family (and style) without size, e.g. "DejaVu Sans" or "Anton". */
  family: string;
  fontfile?: string;
  /** Pixel size; with `fitHeight` and no size, the largest size that fits width×fitHeight is chosen. */
  size?: number;
  width: number;
  fitHeight?: number;
  align: 'left' | 'center' | 'right';
  color: string;
}

/** RGBA of the rendered text, trimmed to its logical extent by Pango; `size` is the pixel size used. */
export async function renderText(t: TextSpec): Promise<Raw & { size: number }> {
  const sharp = await getSharp();
  const c = parseColor(t.color);
  const hex = '#' + [c.r, c.g, c.b].map((v) => v.toString(16).padStart(2, '0')).join('');
  const markup = `<span foreground="${hex}"${c.alpha < 1 ? ` fgalpha="${Math.max(1, Math.round(c.alpha * 100))}%"` : ''}>${xmlEscape(t.text)}</span>`;
  const width = Math.max(1, Math.round(t.width));
  const autofit = t.size === undefined && t.fitHeight !== undefined;
  const img = sharp({
    text: {
      text: markup,
      // At 72 dpi one point is one pixel, so the size in the description is the pixel size.
      font: `${t.family} ${autofit ? 12 : Math.round(t.size ?? 24)}`,
      ...(t.fontfile ? { fontfile: t.fontfile } : {}),
      width,
      ...(autofit ? { height: Math.max(1, Math.round(t.fitHeight!)) } : { dpi: 72 }),
      align: t.align === 'center' ? 'centre' : t.align,
      wrap: 'word-char',
      rgba: true,
    },
  });
  const { data, info } = await img.raw().toBuffer({ resolveWithObject: true });
  const dpi = (info as { textAutofitDpi?: number }).textAutofitDpi ?? 72;
  return {
    data: new Uint8ClampedArray(data.buffer, data.byteOffset, data.length),
    width: info.width,
    height: info.height,
    size: autofit ? (12 * dpi) / 72 : (t.size ?? 24),
  };
}

/** An outline layer: `text`'s coverage grown by `radius` px, in `color`, on a canvas padded by radius. */
export function outline(text: Raw, radius: number, color: string): Raw {
  const r = Math.max(1, Math.round(radius));
  const c = parseColor(color);
  const W = text.width + 2 * r;
  const H = text.height + 2 * r;
  const offsets: number[] = [];
  for (let dy = -r; dy <= r; dy++) for (let dx = -r; dx <= r; dx++) if (dx * dx + dy * dy <= r * r + r) offsets.push(dx, dy);
  const a = new Uint8Array(W * H);
  const src = text.data;
  for (let y = 0; y < text.height; y++)
    for (let x = 0; x < text.width; x++) {
      const v = src[(y * text.width + x) * 4 + 3]!;
      if (!v) continue;
      for (let k = 0; k < offsets.length; k += 2) {
        const p = (y + r + offsets[k + 1]!) * W + x + r + offsets[k]!;
        if (a[p]! < v) a[p] = v;
      }
    }
  const out = new Uint8ClampedArray(W * H * 4);
  for (let p = 0; p < W * H; p++) if (a[p]) out.set([c.r, c.g, c.b, a[p]! * c.alpha], p * 4);
  return { data: out, width: W, height: H };
}
