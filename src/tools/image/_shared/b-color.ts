/** Colour settings: one schema and one parser, so every tool accepts the same spellings. */
import { z } from 'zod';

export interface Rgba {
  r: number;
  g: number;
  b: number;
  /** 0-1 */
  alpha: number;
}

const HEX = /^#(?:[0-9a-f]{3}|[0-9a-f]{4}|[0-9a-f]{6}|[0-9a-f]{8})$/i;

/** `#RGB`, `#RGBA`, `#RRGGBB`, `#RRGGBBAA` or `transparent`. */
export function colorSchema(defaultValue?: string) {
  const s = z
    .string()
    .regex(
      /^(#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})|transparent)$/,
      'expected a hex colour (#RRGGBB or #RRGGBBAA) or "transparent"',
    );
  return defaultValue === undefined ? s : s.default(defaultValue);
}

export function parseColor(c: string): Rgba {
  if (c.toLowerCase() === 'transparent') return { r: 0, g: 0, b: 0, alpha: 0 };
  if (!HEX.test(c)) throw new Error(`bad colour ${c}`);
  let h = c.slice(1);
  if (h.length <= 4) h = [...h].map((x) => x + x).join('');
  const n = (i: number) => parseInt(h.slice(i, i + 2), 16);
  return { r: n(0), g: n(2), b: n(4), alpha: h.length === 8 ? n(6) / 255 : 1 };
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
