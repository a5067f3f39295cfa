/**
 * Colour settings: one schema and one parser, so every tool accepts the same spellings — `#RGB`,
 * `#RGBA`, `#RRGGBB`, `#RRGGBBAA`, a CSS colour name (`red`, `rebeccapurple`) or `transparent`.
 */
import { z } from 'zod';
import { CSS_NAMES } from '../../core/css-colors.js';

export interface Rgba {
  r: number;
  g: number;
  b: number;
  /** 0-1 */
  alpha: number;
}

const HEX = /^#(?:[0-9a-f]{3}|[0-9a-f]{4}|[0-9a-f]{6}|[0-9a-f]{8})$/i;

export function isColor(c: string): boolean {
  const k = c.trim().toLowerCase();
  return HEX.test(k) || k === 'transparent' || CSS_NAMES.has(k);
}

/** A colour setting; its value stays the string the user gave (parse it with parseColor). */
export function colorSchema(defaultValue?: string) {
  const s = z.string().refine(isColor, 'expected a colour: #RGB, #RRGGBB, #RRGGBBAA, a CSS colour name such as "red", or "transparent"');
  return defaultValue === undefined ? s : s.default(defaultValue);
}

export function parseColor(c: string): Rgba {
  const k = c.trim().toLowerCase();
  if (k === 'transparent') return { r: 0, g: 0, b: 0, alpha: 0 };
  const named = CSS_NAMES.get(k);
  if (!named && !HEX.test(k)) throw new Error(`bad colour ${c}`);
  let h = named ?? k.slice(1);
  if (h.length <= 4) h = [...h].map((x) => x + x).join('');
  const n = (i: number) => parseInt(h.slice(i, i + 2), 16);
  return { r: n(0), g: n(2), b: n(4), alpha: h.length === 8 ? n(6) / 255 : 1 };
}

/** `#rrggbb` of a colour, alpha dropped (for Pango markup and other places that take plain hex). */
export function hexOf(c: string | Rgba): string {
  const x = typeof c === 'string' ? parseColor(c) : c;
  return `#${[x.r, x.g, x.b].map((v) => v.toString(16).padStart(2, '0')).join('')}`;
}

/** SVG paint attributes for a colour (librsvg reads #RRGGBBAA inconsistently, so alpha goes in its own attribute). */
export function svgPaint(c: string | Rgba, attr: 'fill' | 'stroke' | 'stop-color' = 'fill'): string {
  const x = typeof c === 'string' ? parseColor(c) : c;
  const opacityAttr = attr === 'stop-color' ? 'stop-opacity' : `${attr}-opacity`;
  return `${attr}="rgb(${x.r},${x.g},${x.b})" ${opacityAttr}="${+x.alpha.toFixed(4)}"`;
}

export function isOpaque(c: string): boolean {
  return parseColor(c).alpha >= 1;
}

/**
 * A colour in ffmpeg's syntax (`0xRRGGBB`, with `@alpha` when it is not opaque), for filter options such as
 * pad's color, drawtext's fontcolor and showwavespic's colors. `opacity` multiplies the colour's own alpha.
 */
export function ffmpegColor(c: string, opacity = 1): string {
  const x = parseColor(c);
  const hex = `0x${hexOf(x).slice(1).toUpperCase()}`;
  const alpha = x.alpha * opacity;
  return alpha < 1 ? `${hex}@${+alpha.toFixed(4)}` : hex;
}
