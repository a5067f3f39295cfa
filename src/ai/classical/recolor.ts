/**
 * Putting new colour under a photo's own lightness, per pixel in L*a*b*: the a*b* planes DDColor
 * predicted (sampled up bilinearly, row by row), or the classical split-tone tint. Pure computation;
 * tasks/colorize.ts runs it in a worker thread (recolor-worker.ts).
 */
import { bilinearAt } from '../models/resample.js';
import { labToRgb, rgbToLab } from './lab.js';

export interface ColorImage {
  width: number;
  height: number;
  rgb: Uint8Array;
}

export interface RecolorJob {
  img: ColorImage;
  intensity: number;
  /** DDColor's a* then b* plane, size × size each; absent: the tint. */
  ab?: Float32Array;
  size?: number;
}

/** a*, b* per pixel of `img` at (x, y) → new RGB written into out. */
export function recolor(img: ColorImage, ab: (x: number, y: number) => [number, number], intensity: number): Uint8Array {
  const { width: W, height: H, rgb } = img;
  const out = new Uint8Array(W * H * 3);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const i = (y * W + x) * 3;
      const [L, a0, b0] = rgbToLab(rgb[i]!, rgb[i + 1]!, rgb[i + 2]!);
      const [a, b] = ab(x, y);
      const [r, g, bl] = labToRgb(L, a0 + (a - a0) * intensity, b0 + (b - b0) * intensity);
      out[i] = r;
      out[i + 1] = g;
      out[i + 2] = bl;
    }
  }
  return out;
}

/** New RGB of `job.img`: DDColor's a*b* when given, else the tint. */
export function recolorJob(job: RecolorJob): Uint8Array {
  const { img, intensity } = job;
  if (!job.ab) {
    const { width: W, rgb } = img;
    return recolor(
      img,
      (x, y) => {
        const i = (y * W + x) * 3;
        const t = (0.299 * rgb[i]! + 0.587 * rgb[i + 1]! + 0.114 * rgb[i + 2]!) / 255;
        return [-3 + 12 * t, -12 + 34 * t];
      },
      intensity,
    );
  }
  const ab = job.ab;
  const size = job.size!;
  const plane = size * size;
  const fx = size / img.width;
  const fy = size / img.height;
  const sample = (x: number, y: number): [number, number] => {
    const sx = (x + 0.5) * fx - 0.5;
    const sy = (y + 0.5) * fy - 0.5;
    return [bilinearAt(ab, size, size, 1, 0, sx, sy), bilinearAt(ab, size, size, 1, plane, sx, sy)];
  };
  return recolor(img, sample, intensity);
}
