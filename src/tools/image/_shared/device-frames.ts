/**
 * Window and device frames for beautify, drawn as SVG around a screenshot of w×h pixels. Sizes scale
 * with the screenshot so a frame looks the same at 400 px and at 4000 px.
 */
import { roundRect } from './qr-svg.js';

export const FRAMES = [
  'none',
  'macos-light',
  'macos-dark',
  'windows-light',
  'windows-dark',
  'browser-light',
  'browser-dark',
  'iphone',
  'iphone-dark',
  'macbook',
  'macbook-dark',
  'ipad',
  'ipad-dark',
] as const;
export type FrameId = (typeof FRAMES)[number];

export interface FrameLayout {
  width: number;
  height: number;
  /** Chrome drawn under the screenshot. */
  svg: string;
  /** Where the screenshot goes and how its corners are cut. */
  screen: { left: number; top: number; radius: number };
  /** Drawn over the screenshot (a phone's camera island). */
  overlaySvg?: string;
  /** Outer corner radius of the framed result (window frames round the whole window). */
  outerRadius: number;
}

const SVG = (w: number, h: number, body: string) =>
  `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}">${body}</svg>`;

export function layoutFrame(frame: FrameId, w: number, h: number, radius: number): FrameLayout {
  const dark = frame.endsWith('-dark');
  const k = Math.max(1, Math.min(w, 2400) / 1000);
  if (frame === 'none') return { width: w, height: h, svg: SVG(w, h, ''), screen: { left: 0, top: 0, radius }, outerRadius: radius };

  if (frame.startsWith('macos') || frame.startsWith('windows') || frame.startsWith('browser')) {
    const bar = Math.round((frame.startsWith('browser') ? 76 : 38) * k);
    const H = h + bar;
    const bg = dark ? '#2b2b2e' : '#ececee';
    const fg = dark ? '#d0d0d4' : '#4a4a4f';
    const parts: string[] = [`<path fill="${bg}" d="${roundRect(0, 0, w, H, radius)}"/>`];
    if (frame.startsWith('macos') || frame.startsWith('browser')) {
      const r = 6.5 * k;
      ['#ff5f57', '#febc2e', '#28c840'].forEach((c, i) => {
        parts.push(`<circle cx="${20 * k + i * 22 * k}" cy="${19 * k}" r="${r}" fill="${c}"/>`);
      });
    }
    if (frame.startsWith('windows')) {
      const y = bar / 2;
      const x0 = w - 150 * k;
      const sw = Math.max(1, 1.2 * k);
      parts.push(`<line x1="${x0}" y1="${y}" x2="${x0 + 12 * k}" y2="${y}" stroke="${fg}" stroke-width="${sw}"/>`);
      parts.push(
        `<rect x="${x0 + 50 * k}" y="${y - 6 * k}" width="${12 * k}" height="${12 * k}" fill="none" stroke="${fg}" stroke-width="${sw}"/>`,
      );
      parts.push(
        `<path d="M${x0 + 100 * k},${y - 6 * k} l${12 * k},${12 * k} M${x0 + 112 * k},${y - 6 * k} l${-12 * k},${12 * k}" stroke="${fg}" stroke-width="${sw}"/>`,
      );
    }
    if (frame.startsWith('browser')) {
      // Address bar: a rounded field across the lower half of the chrome.
      const y = 40 * k;
      parts.push(`<path fill="${dark ? '#1d1d20' : '#ffffff'}" d="${roundRect(90 * k, y, Math.max(10, w - 120 * k), 26 * k, 13 * k)}"/>`);
      parts.push(`<circle cx="${106 * k}" cy="${y + 13 * k}" r="${4 * k}" fill="none" stroke="${fg}" stroke-width="${1.2 * k}"/>`);
      parts.push(
        `<rect x="${20 * k}" y="${y + 12 * k}" width="${14 * k}" height="${2 * k}" fill="${fg}"/><rect x="${48 * k}" y="${y + 12 * k}" width="${14 * k}" height="${2 * k}" fill="${fg}"/>`,
      );
    }
    return { width: w, height: H, svg: SVG(w, H, parts.join('')), screen: { left: 0, top: bar, radius: 0 }, outerRadius: radius };
  }

  if (frame.startsWith('iphone')) {
    const b = Math.round(w * 0.045) + 2;
    const W = w + 2 * b;
    const H = h + 2 * b;
    const outer = Math.round(Math.min(W, H) * 0.14);
    const body = dark ? '#1c1c1e' : '#d8d9dc';
    const svg = SVG(
      W,
      H,
      `<path fill="${body}" d="${roundRect(0, 0, W, H, outer)}"/><path fill="#050505" d="${roundRect(b * 0.35, b * 0.35, W - b * 0.7, H - b * 0.7, outer - b * 0.35)}"/>`,
    );
    // The camera island is sized by the phone's short side, so a landscape shot gets a phone-sized island.
    const short = Math.min(w, h);
    const iw = short * 0.3;
    const ih = Math.max(6, short * 0.085);
    const overlaySvg = SVG(w, h, `<path fill="#000" d="${roundRect((w - iw) / 2, short * 0.03, iw, ih, ih / 2)}"/>`);
    return { width: W, height: H, svg, screen: { left: b, top: b, radius: Math.max(0, outer - b) }, overlaySvg, outerRadius: outer };
  }

  if (frame.startsWith('ipad')) {
    const b = Math.round(Math.min(w, h) * 0.05) + 2;
    const W = w + 2 * b;
    const H = h + 2 * b;
    const outer = Math.round(Math.min(W, H) * 0.06);
    const body = dark ? '#1c1c1e' : '#e4e5e7';
    const bezel = dark ? '#050505' : '#f7f7f8';
    const svg = SVG(
      W,
      H,
      `<path fill="${body}" d="${roundRect(0, 0, W, H, outer)}"/><path fill="${bezel}" d="${roundRect(b * 0.15, b * 0.15, W - b * 0.3, H - b * 0.3, outer - b * 0.15)}"/><circle cx="${W / 2}" cy="${b / 2}" r="${Math.max(1.5, b * 0.12)}" fill="#3a3a3c"/>`,
    );
    return { width: W, height: H, svg, screen: { left: b, top: b, radius: Math.round(outer * 0.4) }, outerRadius: outer };
  }

  // macbook: a lid with a thin bezel (thicker at the top for the camera) on a wider base.
  const b = Math.round(w * 0.025) + 2;
  const top = Math.round(b * 1.5);
  const lidW = w + 2 * b;
  const lidH = h + top + b;
  const baseH = Math.max(6, Math.round(w * 0.035));
  const over = Math.round(w * 0.08);
  const W = lidW + 2 * over;
  const H = lidH + baseH;
  const lid = dark ? '#1c1c1e' : '#0d0d0e';
  const base = dark ? '#3a3a3d' : '#c9cacd';
  const lidR = Math.round(b * 1.2);
  const notchW = Math.round(w * 0.14);
  const svg = SVG(
    W,
    H,
    `<path fill="${lid}" d="M${over + lidR},0 H${over + lidW - lidR} A${lidR},${lidR} 0 0 1 ${over + lidW},${lidR} V${lidH} H${over} V${lidR} A${lidR},${lidR} 0 0 1 ${over + lidR},0 Z"/>` +
      `<circle cx="${W / 2}" cy="${top / 2}" r="${Math.max(1.5, b * 0.15)}" fill="#2c2c2e"/>` +
      `<path fill="${base}" d="M0,${lidH} H${W} V${H - baseH * 0.4} Q${W},${H} ${W - baseH},${H} H${baseH} Q0,${H} 0,${H - baseH * 0.4} Z"/>` +
      `<path fill="${dark ? '#2a2a2c' : '#a9aaad'}" d="${roundRect((W - notchW) / 2, lidH, notchW, baseH * 0.35, baseH * 0.17)}"/>`,
  );
  return { width: W, height: H, svg, screen: { left: over + b, top, radius: 0 }, outerRadius: 0 };
}
