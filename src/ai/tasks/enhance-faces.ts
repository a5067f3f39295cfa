/**
 * Face restoration on the detected faces only: each face (68 landmarks from the face-detection
 * bundle) is aligned to the FFHQ 512×512 template GFPGAN was trained on (a similarity transform fitted
 * to five points: eye centres, nose tip, mouth corners), restored by the network in the AI host, and
 * warped back into the image through a feathered mask (full weight inside, a linear fall-off over the
 * crop's outer 12 %), so nothing outside the faces changes and there is no visible edge.
 */
import { GFPGAN_SIZE, type FaceRestoreOutput } from '../models/gfpgan.js';
import { bilinearAt } from '../models/resample.js';
import { type ModelCall, type RunInfo, runModel } from '../run-model.js';
import type { Face, Point } from './faces.js';

/** Five-point FFHQ template at 512 (facexlib/GFPGAN): left eye, right eye, nose tip, mouth left, mouth right. */
export const FFHQ_512: Point[] = [
  { x: 192.98138, y: 239.94708 },
  { x: 318.90277, y: 240.1936 },
  { x: 256.63416, y: 314.01935 },
  { x: 201.26117, y: 371.41043 },
  { x: 313.08905, y: 371.15118 },
];

/** x' = a·x − b·y + tx, y' = b·x + a·y + ty. */
export interface Similarity {
  a: number;
  b: number;
  tx: number;
  ty: number;
}

const mean = (ps: Point[]): Point => ({ x: ps.reduce((s, p) => s + p.x, 0) / ps.length, y: ps.reduce((s, p) => s + p.y, 0) / ps.length });

/** The five alignment points of a face from its 68 landmarks. */
export function fivePoints(f: Face): Point[] {
  const l = f.landmarks;
  return [mean(l.slice(36, 42)), mean(l.slice(42, 48)), l[30]!, l[48]!, l[54]!];
}

/** Least-squares similarity mapping `src` onto `dst`. */
export function fitSimilarity(src: Point[], dst: Point[]): Similarity {
  const ms = mean(src);
  const md = mean(dst);
  let sxx = 0;
  let sxy = 0;
  let norm = 0;
  for (let i = 0; i < src.length; i++) {
    const x = src[i]!.x - ms.x;
    const y = src[i]!.y - ms.y;
    const u = dst[i]!.x - md.x;
    const v = dst[i]!.y - md.y;
    sxx += x * u + y * v;
    sxy += x * v - y * u;
    norm += x * x + y * y;
  }
  const a = sxx / norm;
  const b = sxy / norm;
  return { a, b, tx: md.x - (a * ms.x - b * ms.y), ty: md.y - (b * ms.x + a * ms.y) };
}

export function apply(m: Similarity, p: Point): Point {
  return { x: m.a * p.x - m.b * p.y + m.tx, y: m.b * p.x + m.a * p.y + m.ty };
}

export function invert(m: Similarity): Similarity {
  const d = m.a * m.a + m.b * m.b;
  const a = m.a / d;
  const b = -m.b / d;
  return { a, b, tx: -(a * m.tx - b * m.ty), ty: -(b * m.tx + a * m.ty) };
}

export interface Image {
  width: number;
  height: number;
  channels: number;
  /** Interleaved pixels (RGB or RGBA); changed in place by pasteFace. */
  data: Uint8Array;
}

/** The aligned S×S RGB crop of the face `m` maps into the template. */
export function alignedCrop(img: Image, m: Similarity, S = GFPGAN_SIZE): Uint8Array {
  const inv = invert(m);
  const out = new Uint8Array(S * S * 3);
  for (let v = 0; v < S; v++) {
    for (let u = 0; u < S; u++) {
      const p = apply(inv, { x: u + 0.5, y: v + 0.5 });
      for (let c = 0; c < 3; c++)
        out[(v * S + u) * 3 + c] = Math.round(bilinearAt(img.data, img.width, img.height, img.channels, c, p.x - 0.5, p.y - 0.5));
    }
  }
  return out;
}

/** Feathered weight of template point (u, v): 1 inside, falling linearly to 0 over `feather` px at the crop's edge. */
export function featherWeight(u: number, v: number, S: number, feather: number): number {
  const d = Math.min(u, v, S - u, S - v);
  return d <= 0 ? 0 : d >= feather ? 1 : d / feather;
}

/** Warps the restored crop back into `img` (in place), blended by the feathered mask × strength. */
export function pasteFace(img: Image, restored: Uint8Array, m: Similarity, strength: number, S = GFPGAN_SIZE): number {
  const inv = invert(m);
  const corners = [
    { x: 0, y: 0 },
    { x: S, y: 0 },
    { x: 0, y: S },
    { x: S, y: S },
  ].map((p) => apply(inv, p));
  const x0 = Math.max(0, Math.floor(Math.min(...corners.map((p) => p.x))));
  const x1 = Math.min(img.width, Math.ceil(Math.max(...corners.map((p) => p.x))));
  const y0 = Math.max(0, Math.floor(Math.min(...corners.map((p) => p.y))));
  const y1 = Math.min(img.height, Math.ceil(Math.max(...corners.map((p) => p.y))));
  const feather = S * 0.12;
  let changed = 0;
  for (let y = y0; y < y1; y++) {
    for (let x = x0; x < x1; x++) {
      const t = apply(m, { x: x + 0.5, y: y + 0.5 });
      const w = featherWeight(t.x, t.y, S, feather) * strength;
      if (w <= 0) continue;
      const i = (y * img.width + x) * img.channels;
      for (let c = 0; c < 3; c++) {
        const r = bilinearAt(restored, S, S, 3, c, t.x - 0.5, t.y - 0.5);
        img.data[i + c] = Math.round(img.data[i + c]! * (1 - w) + r * w);
      }
      changed++;
    }
  }
  return changed;
}

/** Restores `faces` of `img` in place with GFPGAN; returns the run info and per-face pixels changed. */
export async function restoreFaces(
  img: Image,
  faces: Face[],
  strength: number,
  call: ModelCall,
): Promise<{ info?: RunInfo; pixels: number[]; transforms: Similarity[] }> {
  if (!faces.length) return { pixels: [], transforms: [] };
  const S = GFPGAN_SIZE;
  const transforms = faces.map((f) => fitSimilarity(fivePoints(f), FFHQ_512));
  const crops = new Uint8Array(faces.length * S * S * 3);
  for (const [i, m] of transforms.entries()) crops.set(alignedCrop(img, m), i * S * S * 3);
  const { output, info } = await runModel<FaceRestoreOutput>('gfpgan', { count: faces.length, rgb: crops }, call);
  const pixels = transforms.map((m, i) => pasteFace(img, output.rgb.subarray(i * S * S * 3, (i + 1) * S * S * 3), m, strength));
  return { info, pixels, transforms };
}
