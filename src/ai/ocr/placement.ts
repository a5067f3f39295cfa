/**
 * Boxes of a page read turned and levelled, mapped back to the input image. A page is read turned
 * by a quarter turn (scanned sideways) and levelled by its skew; each box found there is a rectangle
 * turned by the same angles on the input. A result box is the axis-aligned box around that turned
 * rectangle (it holds all its ink: a skewed line's box holds its words), and `angle` says which way the
 * text runs, in degrees clockwise (90: down the page), for anything drawn over it (a searchable PDF's
 * text layer).
 */
import type { Box, OcrBlock } from './layout.js';

type Pt = [number, number];

/** A rigid map from the image read to the one it was made from: points, and the clockwise turn it adds. */
export interface Stage {
  map: (p: Pt) => Pt;
  deg: number;
}

const r1 = (n: number) => Math.round(n * 10) / 10;

/** Back from an image rotated by `deg` clockwise about its centre (canvas grown to `from`) to the image of size `to`. */
export function unrotateStage(deg: number, from: { width: number; height: number }, to: { width: number; height: number }): Stage {
  const a = (-deg * Math.PI) / 180;
  const [cos, sin] = [Math.cos(a), Math.sin(a)];
  return {
    map: ([x, y]) => {
      const cx = x - from.width / 2;
      const cy = y - from.height / 2;
      return [cx * cos - cy * sin + to.width / 2, cx * sin + cy * cos + to.height / 2];
    },
    deg: -deg,
  };
}

/** Back from the page turned clockwise by `deg` to the unturned page (`to`: its size). */
export function unturnStage(deg: 0 | 90 | 180 | 270, to: { width: number; height: number }): Stage {
  const { width: W, height: H } = to;
  const map = (p: Pt): Pt => (deg === 90 ? [p[1], H - p[0]] : deg === 180 ? [W - p[0], H - p[1]] : deg === 270 ? [W - p[1], p[0]] : p);
  return { map, deg: -deg };
}

/** Degrees in (-180, 180], a tenth of a degree at most. */
function norm(deg: number): number {
  const d = r1((((deg % 360) + 540) % 360) - 180);
  return d === -180 ? 180 : d;
}

/**
 * `b` (text running at `angle` clockwise inside it, 0 level; for 90 or 270 the box is tall) mapped
 * through `stages` (first to last): the axis-aligned box around it and the angle of its text.
 */
export function place(b: Box, angle: number, stages: Stage[]): { box: Box; angle: number } {
  const a = (angle * Math.PI) / 180;
  const quarter = Math.abs(Math.sin(a)) > Math.SQRT1_2;
  // The text's own length and height (a box turned a quarter is tall), about its centre.
  const len = quarter ? b.height : b.width;
  const hgt = quarter ? b.width : b.height;
  const c: Pt = [b.x + b.width / 2, b.y + b.height / 2];
  const d: Pt = [Math.cos(a), Math.sin(a)];
  const n: Pt = [-d[1], d[0]];
  let pts: Pt[] = [
    [-1, -1],
    [1, -1],
    [1, 1],
    [-1, 1],
  ].map(([i, j]) => [c[0] + (i! * len * d[0] + j! * hgt * n[0]) / 2, c[1] + (i! * len * d[1] + j! * hgt * n[1]) / 2]);
  let deg = angle;
  for (const s of stages) {
    pts = pts.map(s.map);
    deg += s.deg;
  }
  const xs = pts.map((p) => p[0]);
  const ys = pts.map((p) => p[1]);
  const x = Math.min(...xs);
  const y = Math.min(...ys);
  return {
    box: { x: r1(x), y: r1(y), width: r1(Math.max(...xs) - x), height: r1(Math.max(...ys) - y) },
    angle: norm(deg),
  };
}

/** Blocks read through `stages` mapped back to the input; lines and words not level say their `angle`. */
export function placeBlocks(blocks: OcrBlock[], stages: Stage[]): OcrBlock[] {
  if (!stages.some((s) => s.deg)) return blocks;
  const f = <T extends { box: Box; angle?: number }>(o: T): T => {
    const { angle: _, ...rest } = o;
    const p = place(o.box, o.angle ?? 0, stages);
    return { ...rest, box: p.box, ...(p.angle && { angle: p.angle }) } as T;
  };
  return blocks.map((bl) => ({
    ...bl,
    box: place(bl.box, 0, stages).box,
    lines: bl.lines.map((l) => ({ ...f(l), ...(l.words && { words: l.words.map(f) }) })),
  }));
}
