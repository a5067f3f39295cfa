/**
 * Draws a QR module matrix as SVG with the module and finder-pattern shapes of qr-generate. The
 * matrix comes from the `qrcode` package; the shapes are ours, so every style stays scannable:
 * modules keep their grid cell, and rounded shapes stay inside it.
 */
import { svgPaint } from '../../_shared/color.js';

export type DotStyle = 'square' | 'rounded' | 'dots';
export type CornerStyle = 'square' | 'rounded' | 'dot';

export interface QrDrawOptions {
  size: number;
  margin: number;
  colorDark: string;
  colorLight: string;
  dotStyle: DotStyle;
  cornerStyle: CornerStyle;
  /** Modules hidden behind a centred logo, as a fraction of the symbol width (0 = none). */
  logoFraction?: number;
}

export function qrSvg(matrix: { size: number; get(x: number, y: number): boolean }, o: QrDrawOptions): string {
  const n = matrix.size;
  const total = n + 2 * o.margin;
  const u = o.size / total;
  const at = (m: number) => (m + o.margin) * u;
  const inFinder = (x: number, y: number) => (x < 7 && y < 7) || (x >= n - 7 && y < 7) || (x < 7 && y >= n - 7);
  const clear = o.logoFraction ? logoModules(n, o.logoFraction) : 0;
  const c0 = Math.floor((n - clear) / 2);
  const inLogo = (x: number, y: number) => clear > 0 && x >= c0 && x < c0 + clear && y >= c0 && y < c0 + clear;

  const parts: string[] = [];
  for (let y = 0; y < n; y++)
    for (let x = 0; x < n; x++) {
      if (!matrix.get(x, y) || inFinder(x, y) || inLogo(x, y)) continue;
      parts.push(
        moduleShape(
          at(x),
          at(y),
          u,
          o.dotStyle,
          (dx, dy) => x + dx >= 0 && y + dy >= 0 && x + dx < n && y + dy < n && matrix.get(x + dx, y + dy) && !inFinder(x + dx, y + dy),
        ),
      );
    }
  for (const [fx, fy] of [
    [0, 0],
    [n - 7, 0],
    [0, n - 7],
  ] as const)
    parts.push(finder(at(fx), at(fy), u, o.cornerStyle));
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${o.size}" height="${o.size}" viewBox="0 0 ${o.size} ${o.size}" shape-rendering="geometricPrecision">` +
    `<rect width="100%" height="100%" ${svgPaint(o.colorLight)}/>` +
    `<g ${svgPaint(o.colorDark)}>${parts.join('')}</g></svg>`
  );
}

function moduleShape(x: number, y: number, u: number, style: DotStyle, dark: (dx: number, dy: number) => boolean): string {
  // A hair of overlap hides anti-aliasing seams between neighbouring square modules.
  const e = u * 0.02;
  if (style === 'square') return `<rect x="${f(x - e)}" y="${f(y - e)}" width="${f(u + 2 * e)}" height="${f(u + 2 * e)}"/>`;
  if (style === 'dots') return `<circle cx="${f(x + u / 2)}" cy="${f(y + u / 2)}" r="${f(u * 0.45)}"/>`;
  // rounded: a corner is rounded only where neither neighbour on that side is dark, so runs of modules
  // read as connected bars with soft ends.
  const r = u / 2;
  const up = dark(0, -1),
    down = dark(0, 1),
    left = dark(-1, 0),
    right = dark(1, 0);
  const tl = !up && !left ? r : 0,
    tr = !up && !right ? r : 0,
    br = !down && !right ? r : 0,
    bl = !down && !left ? r : 0;
  return `<path d="M${f(x + tl)},${f(y)} H${f(x + u - tr)} ${arc(tr, x + u, y + tr)} V${f(y + u - br)} ${arc(br, x + u - br, y + u)} H${f(x + bl)} ${arc(bl, x, y + u - bl)} V${f(y + tl)} ${arc(tl, x + tl, y)} Z"/>`;
}

function arc(r: number, x: number, y: number): string {
  return r > 0 ? `A${f(r)},${f(r)} 0 0 1 ${f(x)},${f(y)}` : `L${f(x)},${f(y)}`;
}

function finder(x: number, y: number, u: number, style: CornerStyle): string {
  const outer = 7 * u;
  const inner = 3 * u;
  const ringR = style === 'square' ? 0 : style === 'rounded' ? 2 * u : 3.5 * u;
  const eyeR = style === 'square' ? 0 : style === 'rounded' ? u : 1.5 * u;
  // Outer ring: a 7×7 shape minus a 5×5 hole (even-odd), then the 3×3 eye.
  const ring = `${roundRect(x, y, outer, outer, ringR)} ${roundRect(x + u, y + u, 5 * u, 5 * u, Math.max(0, ringR - u))}`;
  return `<path fill-rule="evenodd" d="${ring}"/><path d="${roundRect(x + 2 * u, y + 2 * u, inner, inner, eyeR)}"/>`;
}

/** Modules cleared for a logo: same parity as the symbol so the hole is exactly centred. */
export function logoModules(n: number, fraction: number): number {
  const c = Math.ceil(n * fraction);
  return (n - c) % 2 === 0 ? c : c + 1;
}

export function roundRect(x: number, y: number, w: number, h: number, r: number): string {
  r = Math.min(r, w / 2, h / 2);
  if (r <= 0) return `M${f(x)},${f(y)} H${f(x + w)} V${f(y + h)} H${f(x)} Z`;
  return `M${f(x + r)},${f(y)} H${f(x + w - r)} A${f(r)},${f(r)} 0 0 1 ${f(x + w)},${f(y + r)} V${f(y + h - r)} A${f(r)},${f(r)} 0 0 1 ${f(x + w - r)},${f(y + h)} H${f(x + r)} A${f(r)},${f(r)} 0 0 1 ${f(x)},${f(y + h - r)} V${f(y + r)} A${f(r)},${f(r)} 0 0 1 ${f(x + r)},${f(y)} Z`;
}

function f(v: number): string {
  return (+v.toFixed(3)).toString();
}
