/**
 * PP-OCR text recognition (SVTR-LCNet, CTC): a line image scaled to 48 px high, (v/255 − 0.5) / 0.5
 * per channel in BGR order, NCHW; the model answers per time step a probability for each character of
 * its dictionary (index 0 is the CTC blank, the last is the space). Greedy decoding keeps the best
 * character per step, merges repeats and drops blanks; a line's confidence is the mean probability
 * of the characters it kept. The angle classifier (0° or 180°) takes the same input at 48 × 192.
 */
import { resizeBilinear } from './resample.js';

export const REC_HEIGHT = 48;
const MAX_WIDTH = 48 * 40;

/** A crop of `rgb` (box in pixels) scaled to height 48 (width by aspect, at least `minWidth`), as a normalised tensor. */
export function lineInput(
  rgb: Uint8Array,
  width: number,
  box: { x: number; y: number; width: number; height: number },
  opts: { fixedWidth?: number; flip?: boolean } = {},
): { data: Float32Array; w: number } {
  const x0 = Math.max(0, Math.floor(box.x));
  const y0 = Math.max(0, Math.floor(box.y));
  const cw = Math.max(1, Math.min(width - x0, Math.ceil(box.width)));
  const ch = Math.max(1, Math.ceil(box.height));
  const crop = new Uint8Array(cw * ch * 3);
  for (let y = 0; y < ch; y++) {
    const src = ((y0 + y) * width + x0) * 3;
    crop.set(rgb.subarray(src, src + cw * 3), y * cw * 3);
  }
  const H = REC_HEIGHT;
  const scaledW = Math.max(1, Math.min(MAX_WIDTH, Math.round((cw * H) / ch)));
  const W = opts.fixedWidth ?? Math.max(scaledW, 16);
  const drawW = Math.min(W, scaledW);
  const px = resizeBilinear(crop, cw, ch, 3, drawW, H);
  const plane = W * H;
  const data = new Float32Array(3 * plane);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < drawW; x++) {
      const sx = opts.flip ? drawW - 1 - x : x;
      const sy = opts.flip ? H - 1 - y : y;
      const i = (sy * drawW + sx) * 3;
      const p = y * W + x;
      for (let c = 0; c < 3; c++) data[c * plane + p] = (px[i + 2 - c]! / 255 - 0.5) / 0.5;
    }
  }
  return { data, w: W };
}

/** Greedy CTC decoding of one line's [steps × classes] probabilities. */
export function ctcDecode(prob: Float32Array, steps: number, classes: number, dict: string[]): { text: string; confidence: number } {
  let text = '';
  let sum = 0;
  let kept = 0;
  let prev = -1;
  for (let t = 0; t < steps; t++) {
    let best = 0;
    let bestP = -1;
    const off = t * classes;
    for (let c = 0; c < classes; c++) {
      const p = prob[off + c]!;
      if (p > bestP) {
        bestP = p;
        best = c;
      }
    }
    if (best !== 0 && best !== prev) {
      text += dict[best - 1] ?? '';
      sum += bestP;
      kept++;
    }
    prev = best;
  }
  return { text: text.trim(), confidence: kept ? sum / kept : 0 };
}
