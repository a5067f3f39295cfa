/**
 * Colorization: DDColor predicts the a*b* colour planes of the photo at 512×512 from its lightness;
 * they are sampled up (bilinear, row by row — no full-size float planes are held) and put under the
 * photo's own full-resolution lightness, so detail is the photo's and only colour comes from the model.
 * `intensity` blends the predicted colour with the photo's own (0 = unchanged, 1 = the model's).
 *
 * The classical `tint` needs no model: shadows toward a cool, highlights toward a warm tone by
 * lightness (split toning). It is not natural colour, and results say so.
 */
import { getSharp } from '../../engines/sharp.js';
import { labToRgb, rgbToLab } from '../classical/lab.js';
import { DDCOLOR_SIZE, type DDColorOutput } from '../models/ddcolor.js';
import { type ModelCall, type RunInfo, runModel } from '../run-model.js';

export interface ColorImage {
  width: number;
  height: number;
  rgb: Uint8Array;
}

/** a*, b* per pixel of `img` at (x, y) → new RGB written into out. */
function recolor(img: ColorImage, ab: (x: number, y: number) => [number, number], intensity: number): Uint8Array {
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

export async function colorizeDDColor(img: ColorImage, intensity: number, call: ModelCall): Promise<{ rgb: Uint8Array; info: RunInfo }> {
  const sharp = await getSharp();
  const S = DDCOLOR_SIZE;
  const small = await sharp(img.rgb, { raw: { width: img.width, height: img.height, channels: 3 } })
    .resize(S, S, { fit: 'fill', kernel: 'cubic' })
    .raw()
    .toBuffer();
  // The network sees lightness only: L* with a* = b* = 0, back in RGB.
  const grey = new Uint8Array(S * S * 3);
  for (let p = 0; p < S * S; p++) {
    const [L] = rgbToLab(small[p * 3]!, small[p * 3 + 1]!, small[p * 3 + 2]!);
    const [r, g, b] = labToRgb(L, 0, 0);
    grey[p * 3] = r;
    grey[p * 3 + 1] = g;
    grey[p * 3 + 2] = b;
  }
  call.progress?.(0.1, 'colorizing (DDColor)');
  const { output, info } = await runModel<DDColorOutput>('ddcolor', { rgb: grey }, { ...call, progress: undefined });
  call.signal?.throwIfAborted();
  call.progress?.(0.7, 'applying colour');
  const { ab, size } = output;
  const plane = size * size;
  const fx = size / img.width;
  const fy = size / img.height;
  const sample = (x: number, y: number): [number, number] => {
    const sx = Math.min(size - 1, Math.max(0, (x + 0.5) * fx - 0.5));
    const sy = Math.min(size - 1, Math.max(0, (y + 0.5) * fy - 0.5));
    const x0 = Math.floor(sx);
    const y0 = Math.floor(sy);
    const x1 = Math.min(size - 1, x0 + 1);
    const y1 = Math.min(size - 1, y0 + 1);
    const wx = sx - x0;
    const wy = sy - y0;
    const at = (o: number) =>
      (ab[o + y0 * size + x0]! * (1 - wx) + ab[o + y0 * size + x1]! * wx) * (1 - wy) +
      (ab[o + y1 * size + x0]! * (1 - wx) + ab[o + y1 * size + x1]! * wx) * wy;
    return [at(0), at(plane)];
  };
  return { rgb: recolor(img, sample, intensity), info };
}

/** Split toning by lightness (no model): cool shadows, warm highlights. */
export function colorizeTint(img: ColorImage, intensity: number): Uint8Array {
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
