/**
 * Colour settings: one schema and one parser, so every tool accepts the same spellings — hex with or
 * without `#` (`#f00`, `ff0000`, `#ff000080`: 3, 4, 6 or 8 digits; a `#` starts a comment in the shell),
 * `rgb()`/`rgba()` and `hsl()`/`hsla()` as CSS writes them (commas or spaces, `/ alpha`, percentages), a
 * CSS colour name (`red`, `rebeccapurple`), `transparent`, and ImageMagick's `none` for transparent.
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

const HEX = /^#?([0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})$/;
const FUNCTION = /^(rgba?|hsla?)\((.*)\)$/;
const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$/;

function fromHex(digits: string): Rgba {
  const h = digits.length <= 4 ? [...digits].map((x) => x + x).join('') : digits;
  const n = (i: number) => parseInt(h.slice(i, i + 2), 16);
  return { r: n(0), g: n(2), b: n(4), alpha: h.length === 8 ? n(6) / 255 : 1 };
}

/** A number, or a percentage of `full`; undefined when it is neither or lies outside 0…full. */
function amount(token: string | undefined, full: number, percentOnly = false): number | undefined {
  if (token === undefined) return undefined;
  const pct = token.endsWith('%');
  const t = pct ? token.slice(0, -1) : token;
  if (!NUMBER.test(t) || (percentOnly && !pct)) return undefined;
  const v = pct ? (Number(t) / 100) * full : Number(t);
  return v >= 0 && v <= full ? v : undefined;
}

/** A hue in degrees: a bare number, or with deg, grad, rad or turn. */
function hue(token: string | undefined): number | undefined {
  const m = token === undefined ? null : /^(.*?)(deg|grad|rad|turn)?$/.exec(token);
  if (!m || !NUMBER.test(m[1]!)) return undefined;
  const per = { deg: 1, grad: 0.9, rad: 180 / Math.PI, turn: 360 }[m[2] ?? 'deg']!;
  return (((Number(m[1]) * per) % 360) + 360) % 360;
}

/** rgb()/rgba()/hsl()/hsla() arguments: legacy `1, 2, 3[, a]` or modern `1 2 3[ / a]`. */
function fromFunction(name: string, args: string): Rgba | undefined {
  let parts: string[];
  if (args.includes(',')) {
    if (args.includes('/')) return undefined;
    parts = args.split(',').map((x) => x.trim());
  } else {
    const [channels, alphaPart, extra] = args.split('/');
    if (extra !== undefined) return undefined;
    parts = channels!.trim().split(/\s+/);
    if (parts.length !== 3) return undefined;
    if (alphaPart !== undefined) parts.push(alphaPart.trim());
  }
  if (parts.length < 3 || parts.length > 4) return undefined;
  const alpha = parts.length === 4 ? amount(parts[3], 1) : 1;
  if (alpha === undefined) return undefined;
  if (name.startsWith('rgb')) {
    const [r, g, b] = parts.slice(0, 3).map((x) => amount(x, 255));
    if (r === undefined || g === undefined || b === undefined) return undefined;
    return { r: Math.round(r), g: Math.round(g), b: Math.round(b), alpha };
  }
  const h = hue(parts[0]);
  const sat = amount(parts[1], 1, true);
  const light = amount(parts[2], 1, true);
  if (h === undefined || sat === undefined || light === undefined) return undefined;
  // CSS Color 4's hsl-to-rgb.
  const f = (n: number) => {
    const k = (n + h / 30) % 12;
    return Math.round(255 * (light - sat * Math.min(light, 1 - light) * Math.max(-1, Math.min(k - 3, 9 - k, 1))));
  };
  return { r: f(0), g: f(8), b: f(4), alpha };
}

/** `c` as RGBA, or undefined when it is none of the spellings above. */
function readColor(c: string): Rgba | undefined {
  const k = c.trim().toLowerCase();
  if (k === 'transparent' || k === 'none') return { r: 0, g: 0, b: 0, alpha: 0 };
  const named = CSS_NAMES.get(k);
  if (named) return fromHex(named);
  const hex = HEX.exec(k);
  if (hex) return fromHex(hex[1]!);
  const fn = FUNCTION.exec(k);
  return fn ? fromFunction(fn[1]!, fn[2]!) : undefined;
}

export function isColor(c: string): boolean {
  return readColor(c) !== undefined;
}

/** How a colour may be written, for the error that refuses one. */
const COLOR_SPELLINGS =
  'a colour: #RRGGBB or RRGGBB (3, 4, 6 or 8 hex digits; 4 and 8 carry alpha), rgb(255, 0, 0), rgba(255, 0, 0, 0.5), hsl(0, 100%, 50%), a CSS colour name such as "red", or "transparent"';

/** A colour setting; its value stays the string the user gave (parse it with parseColor). */
export function colorSchema(defaultValue?: string) {
  const s = z.string().refine(isColor, `expected ${COLOR_SPELLINGS}`);
  return defaultValue === undefined ? s : s.default(defaultValue);
}

export function parseColor(c: string): Rgba {
  const x = readColor(c);
  if (!x) throw new Error(`bad colour ${c}`);
  return x;
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
