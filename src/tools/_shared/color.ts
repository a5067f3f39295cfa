/**
 * Colour settings: one schema and one parser, so every tool accepts the same spellings — `#RGB`,
 * `#RGBA`, `#RRGGBB`, `#RRGGBBAA`, a CSS colour name (`red`, `rebeccapurple`) or `transparent`.
 */
import { z } from 'zod';

export interface Rgba {
  r: number;
  g: number;
  b: number;
  /** 0-1 */
  alpha: number;
}

const HEX = /^#(?:[0-9a-f]{3}|[0-9a-f]{4}|[0-9a-f]{6}|[0-9a-f]{8})$/i;

/** The 148 named colours of CSS Color Module Level 4, name:rrggbb. */
const CSS_NAMES: ReadonlyMap<string, string> = new Map(
  (
    'aliceblue:f0f8ff antiquewhite:faebd7 aqua:00ffff aquamarine:7fffd4 azure:f0ffff beige:f5f5dc bisque:ffe4c4 ' +
    'black:000000 blanchedalmond:ffebcd blue:0000ff blueviolet:8a2be2 brown:a52a2a burlywood:deb887 ' +
    'cadetblue:5f9ea0 chartreuse:7fff00 chocolate:d2691e coral:ff7f50 cornflowerblue:6495ed cornsilk:fff8dc ' +
    'crimson:dc143c cyan:00ffff darkblue:00008b darkcyan:008b8b darkgoldenrod:b8860b darkgray:a9a9a9 ' +
    'darkgreen:006400 darkgrey:a9a9a9 darkkhaki:bdb76b darkmagenta:8b008b darkolivegreen:556b2f darkorange:ff8c00 ' +
    'darkorchid:9932cc darkred:8b0000 darksalmon:e9967a darkseagreen:8fbc8f darkslateblue:483d8b ' +
    'darkslategray:2f4f4f darkslategrey:2f4f4f darkturquoise:00ced1 darkviolet:9400d3 deeppink:ff1493 ' +
    'deepskyblue:00bfff dimgray:696969 dimgrey:696969 dodgerblue:1e90ff firebrick:b22222 floralwhite:fffaf0 ' +
    'forestgreen:228b22 fuchsia:ff00ff gainsboro:dcdcdc ghostwhite:f8f8ff gold:ffd700 goldenrod:daa520 gray:808080 ' +
    'green:008000 greenyellow:adff2f grey:808080 honeydew:f0fff0 hotpink:ff69b4 indianred:cd5c5c indigo:4b0082 ' +
    'ivory:fffff0 khaki:f0e68c lavender:e6e6fa lavenderblush:fff0f5 lawngreen:7cfc00 lemonchiffon:fffacd ' +
    'lightblue:add8e6 lightcoral:f08080 lightcyan:e0ffff lightgoldenrodyellow:fafad2 lightgray:d3d3d3 ' +
    'lightgreen:90ee90 lightgrey:d3d3d3 lightpink:ffb6c1 lightsalmon:ffa07a lightseagreen:20b2aa ' +
    'lightskyblue:87cefa lightslategray:778899 lightslategrey:778899 lightsteelblue:b0c4de lightyellow:ffffe0 ' +
    'lime:00ff00 limegreen:32cd32 linen:faf0e6 magenta:ff00ff maroon:800000 mediumaquamarine:66cdaa ' +
    'mediumblue:0000cd mediumorchid:ba55d3 mediumpurple:9370db mediumseagreen:3cb371 mediumslateblue:7b68ee ' +
    'mediumspringgreen:00fa9a mediumturquoise:48d1cc mediumvioletred:c71585 midnightblue:191970 mintcream:f5fffa ' +
    'mistyrose:ffe4e1 moccasin:ffe4b5 navajowhite:ffdead navy:000080 oldlace:fdf5e6 olive:808000 olivedrab:6b8e23 ' +
    'orange:ffa500 orangered:ff4500 orchid:da70d6 palegoldenrod:eee8aa palegreen:98fb98 paleturquoise:afeeee ' +
    'palevioletred:db7093 papayawhip:ffefd5 peachpuff:ffdab9 peru:cd853f pink:ffc0cb plum:dda0dd powderblue:b0e0e6 ' +
    'purple:800080 rebeccapurple:663399 red:ff0000 rosybrown:bc8f8f royalblue:4169e1 saddlebrown:8b4513 ' +
    'salmon:fa8072 sandybrown:f4a460 seagreen:2e8b57 seashell:fff5ee sienna:a0522d silver:c0c0c0 skyblue:87ceeb ' +
    'slateblue:6a5acd slategray:708090 slategrey:708090 snow:fffafa springgreen:00ff7f steelblue:4682b4 tan:d2b48c ' +
    'teal:008080 thistle:d8bfd8 tomato:ff6347 turquoise:40e0d0 violet:ee82ee wheat:f5deb3 white:ffffff ' +
    'whitesmoke:f5f5f5 yellow:ffff00 yellowgreen:9acd32'
  )
    .split(' ')
    .map((pair) => pair.split(':') as [string, string]),
);

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
