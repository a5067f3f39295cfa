/**
 * PP-OCR text detection (DB, differentiable binarization): the image is scaled so its longest side is
 * at most `limitSide` (sides multiples of 32), normalised per channel in BGR order as PaddleOCR
 * trains it; the model answers a text-probability map. Text regions are the connected components of
 * the map above `thresh`, kept when their mean probability reaches `boxThresh`, then grown by the DB
 * "unclip" distance (area × ratio / perimeter) back to the glyphs' full extent.
 */
import { resizeBilinear } from './resample.js';

const MEAN = [0.485, 0.456, 0.406];
const STD = [0.229, 0.224, 0.225];

export interface DetOptions {
  limitSide: number;
  thresh: number;
  boxThresh: number;
  unclipRatio: number;
}

export interface DetBox {
  x: number;
  y: number;
  width: number;
  height: number;
  score: number;
}

export function detInput(rgb: Uint8Array, width: number, height: number, limitSide: number): { data: Float32Array; w: number; h: number } {
  const scale = Math.min(1, limitSide / Math.max(width, height));
  const w = Math.max(32, Math.round((width * scale) / 32) * 32);
  const h = Math.max(32, Math.round((height * scale) / 32) * 32);
  const px = resizeBilinear(rgb, width, height, 3, w, h);
  const plane = w * h;
  const data = new Float32Array(3 * plane);
  for (let p = 0, i = 0; p < plane; p++, i += 3) {
    // BGR order: channel 0 is blue.
    for (let c = 0; c < 3; c++) data[c * plane + p] = (px[i + 2 - c]! / 255 - MEAN[c]!) / STD[c]!;
  }
  return { data, w, h };
}

/** Boxes in the original image's pixels from the probability map (mw × mh) of an image width × height. */
export function detBoxes(prob: Float32Array, mw: number, mh: number, width: number, height: number, o: DetOptions): DetBox[] {
  const n = mw * mh;
  const label = new Int32Array(n).fill(-1);
  const stack = new Int32Array(n);
  const boxes: DetBox[] = [];
  const sx = width / mw;
  const sy = height / mh;
  for (let start = 0; start < n; start++) {
    if (label[start] !== -1 || prob[start]! < o.thresh) continue;
    let top = 0;
    stack[top++] = start;
    label[start] = boxes.length;
    let x0 = mw;
    let y0 = mh;
    let x1 = 0;
    let y1 = 0;
    let sum = 0;
    let count = 0;
    while (top) {
      const p = stack[--top]!;
      const x = p % mw;
      const y = (p - x) / mw;
      sum += prob[p]!;
      count++;
      if (x < x0) x0 = x;
      if (x > x1) x1 = x;
      if (y < y0) y0 = y;
      if (y > y1) y1 = y;
      const next = [x > 0 ? p - 1 : -1, x < mw - 1 ? p + 1 : -1, y > 0 ? p - mw : -1, y < mh - 1 ? p + mw : -1];
      for (const q of next) {
        if (q >= 0 && label[q] === -1 && prob[q]! >= o.thresh) {
          label[q] = boxes.length;
          stack[top++] = q;
        }
      }
    }
    const w = x1 - x0 + 1;
    const h = y1 - y0 + 1;
    const score = sum / count;
    if (Math.min(w, h) < 3 || score < o.boxThresh) {
      boxes.push({ x: 0, y: 0, width: 0, height: 0, score: -1 });
      continue;
    }
    const d = (w * h * o.unclipRatio) / (2 * (w + h));
    const bx0 = Math.max(0, (x0 - d) * sx);
    const by0 = Math.max(0, (y0 - d) * sy);
    const bx1 = Math.min(width, (x1 + 1 + d) * sx);
    const by1 = Math.min(height, (y1 + 1 + d) * sy);
    boxes.push({ x: bx0, y: by0, width: bx1 - bx0, height: by1 - by0, score });
  }
  return boxes.filter((b) => b.score >= 0);
}
