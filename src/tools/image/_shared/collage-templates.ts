/**
 * Collage templates: each is a grid of units and the cells laid on it ([col, row, colSpan, rowSpan]).
 * The ids follow the reference's scheme (leading digit = number of images); a few more fill gaps in
 * that set (single image, bottom/right-large variants, strips). A unit is UNIT px high and
 * UNIT × unitAspect px wide, so cells come out close to the shapes photos have.
 */
export const UNIT = 600;

export interface CollageTemplate {
  cols: number;
  rows: number;
  /** Unit width / unit height (default 1). */
  unitAspect?: number;
  cells: [number, number, number, number][];
}

const grid = (cols: number, rows: number): CollageTemplate => ({
  cols,
  rows,
  cells: Array.from({ length: cols * rows }, (_, i) => [i % cols, Math.floor(i / cols), 1, 1] as [number, number, number, number]),
});

export const COLLAGE_TEMPLATES: Record<string, CollageTemplate> = {
  '1-single': grid(1, 1),
  '2-h-equal': grid(2, 1),
  '2-v-equal': { ...grid(1, 2), unitAspect: 1.5 },
  '2-h-left-large': {
    cols: 3,
    rows: 1,
    cells: [
      [0, 0, 2, 1],
      [2, 0, 1, 1],
    ],
  },
  '2-h-right-large': {
    cols: 3,
    rows: 1,
    cells: [
      [0, 0, 1, 1],
      [1, 0, 2, 1],
    ],
  },
  '2-v-top-large': {
    cols: 1,
    rows: 3,
    unitAspect: 2,
    cells: [
      [0, 0, 1, 2],
      [0, 2, 1, 1],
    ],
  },
  '2-v-bottom-large': {
    cols: 1,
    rows: 3,
    unitAspect: 2,
    cells: [
      [0, 0, 1, 1],
      [0, 1, 1, 2],
    ],
  },
  '3-left-large': {
    cols: 2,
    rows: 2,
    cells: [
      [0, 0, 1, 2],
      [1, 0, 1, 1],
      [1, 1, 1, 1],
    ],
  },
  '3-right-large': {
    cols: 2,
    rows: 2,
    cells: [
      [0, 0, 1, 1],
      [0, 1, 1, 1],
      [1, 0, 1, 2],
    ],
  },
  '3-top-large': {
    cols: 2,
    rows: 2,
    cells: [
      [0, 0, 2, 1],
      [0, 1, 1, 1],
      [1, 1, 1, 1],
    ],
  },
  '3-bottom-large': {
    cols: 2,
    rows: 2,
    cells: [
      [0, 0, 1, 1],
      [1, 0, 1, 1],
      [0, 1, 2, 1],
    ],
  },
  '3-h-equal': grid(3, 1),
  '3-v-equal': { ...grid(1, 3), unitAspect: 1.5 },
  '4-grid': grid(2, 2),
  '4-left-large': {
    cols: 3,
    rows: 3,
    cells: [
      [0, 0, 2, 3],
      [2, 0, 1, 1],
      [2, 1, 1, 1],
      [2, 2, 1, 1],
    ],
  },
  '4-right-large': {
    cols: 3,
    rows: 3,
    cells: [
      [0, 0, 1, 1],
      [0, 1, 1, 1],
      [0, 2, 1, 1],
      [1, 0, 2, 3],
    ],
  },
  '4-top-large': {
    cols: 3,
    rows: 3,
    cells: [
      [0, 0, 3, 2],
      [0, 2, 1, 1],
      [1, 2, 1, 1],
      [2, 2, 1, 1],
    ],
  },
  '4-bottom-large': {
    cols: 3,
    rows: 3,
    cells: [
      [0, 0, 1, 1],
      [1, 0, 1, 1],
      [2, 0, 1, 1],
      [0, 1, 3, 2],
    ],
  },
  '4-h-equal': grid(4, 1),
  '4-v-equal': { ...grid(1, 4), unitAspect: 2 },
  '5-top2-bottom3': {
    cols: 6,
    rows: 2,
    unitAspect: 0.5,
    cells: [
      [0, 0, 3, 1],
      [3, 0, 3, 1],
      [0, 1, 2, 1],
      [2, 1, 2, 1],
      [4, 1, 2, 1],
    ],
  },
  '5-top3-bottom2': {
    cols: 6,
    rows: 2,
    unitAspect: 0.5,
    cells: [
      [0, 0, 2, 1],
      [2, 0, 2, 1],
      [4, 0, 2, 1],
      [0, 1, 3, 1],
      [3, 1, 3, 1],
    ],
  },
  '5-left-large': {
    cols: 4,
    rows: 2,
    cells: [
      [0, 0, 2, 2],
      [2, 0, 1, 1],
      [3, 0, 1, 1],
      [2, 1, 1, 1],
      [3, 1, 1, 1],
    ],
  },
  '5-center-large': {
    cols: 4,
    rows: 2,
    cells: [
      [0, 0, 1, 1],
      [0, 1, 1, 1],
      [1, 0, 2, 2],
      [3, 0, 1, 1],
      [3, 1, 1, 1],
    ],
  },
  '6-grid-2x3': grid(2, 3),
  '6-grid-3x2': grid(3, 2),
  '6-top-large': {
    cols: 5,
    rows: 3,
    cells: [
      [0, 0, 5, 2],
      [0, 2, 1, 1],
      [1, 2, 1, 1],
      [2, 2, 1, 1],
      [3, 2, 1, 1],
      [4, 2, 1, 1],
    ],
  },
  '6-left-large': {
    cols: 3,
    rows: 3,
    cells: [
      [0, 0, 2, 2],
      [2, 0, 1, 1],
      [2, 1, 1, 1],
      [0, 2, 1, 1],
      [1, 2, 1, 1],
      [2, 2, 1, 1],
    ],
  },
  '7-mosaic': {
    cols: 4,
    rows: 3,
    cells: [
      [0, 0, 2, 2],
      [2, 0, 1, 1],
      [3, 0, 1, 1],
      [2, 1, 1, 1],
      [3, 1, 1, 1],
      [0, 2, 2, 1],
      [2, 2, 2, 1],
    ],
  },
  '8-mosaic': {
    cols: 4,
    rows: 3,
    cells: [
      [0, 0, 2, 2],
      [2, 0, 1, 1],
      [3, 0, 1, 1],
      [2, 1, 1, 1],
      [3, 1, 1, 1],
      [0, 2, 1, 1],
      [1, 2, 1, 1],
      [2, 2, 2, 1],
    ],
  },
  '8-grid-4x2': grid(4, 2),
  '9-grid': grid(3, 3),
  '9-mosaic': {
    cols: 4,
    rows: 4,
    cells: [
      [0, 0, 2, 2],
      [2, 0, 2, 1],
      [2, 1, 1, 1],
      [3, 1, 1, 1],
      [0, 2, 1, 2],
      [1, 2, 1, 1],
      [1, 3, 1, 1],
      [2, 2, 2, 1],
      [2, 3, 2, 1],
    ],
  },
};

export const COLLAGE_TEMPLATE_IDS = Object.keys(COLLAGE_TEMPLATES);

export interface CellRect {
  left: number;
  top: number;
  width: number;
  height: number;
}

/** Pixel rectangles of a template's cells with `gap` between cells and around the edge. */
export function layoutTemplate(t: CollageTemplate, gap: number): { width: number; height: number; cells: CellRect[] } {
  const uw = Math.round(UNIT * (t.unitAspect ?? 1));
  const uh = UNIT;
  return {
    width: t.cols * uw + (t.cols + 1) * gap,
    height: t.rows * uh + (t.rows + 1) * gap,
    cells: t.cells.map(([c, r, cs, rs]) => ({
      left: gap + c * (uw + gap),
      top: gap + r * (uh + gap),
      width: cs * uw + (cs - 1) * gap,
      height: rs * uh + (rs - 1) * gap,
    })),
  };
}
