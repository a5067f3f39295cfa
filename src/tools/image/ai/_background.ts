/**
 * What the background tools share: the decoded picture with its ISNet matte, mask refinement
 * (guided filter, feather), colour decontamination of edge pixels, the backgrounds (solid, gradient,
 * blurred original, image), a drop shadow, and the one compositing step. Float planes in 0–1 keep
 * the arithmetic exact; blurs are three passes of a separable box filter (a close Gaussian).
 */
import type { Sharp } from 'sharp';
import { outputFile } from '../../_shared/output.js';
import { KilnError } from '../../../core/errors.js';
import type { InputFile, OutputFile, RunContext } from '../../../core/tool.js';
import { getSharp, type ImageFormat, medianRaw, writeImage } from '../../../engines/sharp.js';
import { foregroundMatte, type MatteModel } from '../../../ai/tasks/matte.js';
import type { RunInfo } from '../../../ai/run-model.js';
import { parseColor } from '../../_shared/color.js';
import { openInput } from '../_shared/decode.js';

/** The user-facing model names (the catalog's `model` is a free string) and the files they run. */
export const MATTE_MODELS: Record<string, MatteModel> = {
  isnet: 'isnet-fp16',
  // The catalog's known value for the same network (ISNet general-use weights).
  'isnet-general-use': 'isnet-fp16',
  'isnet-small': 'isnet-quint8',
};

export function matteModel(name: string | undefined): MatteModel {
  const m = MATTE_MODELS[name ?? 'isnet'];
  if (!m)
    throw new KilnError(
      'VALIDATION_ERROR',
      `model: ${name} is not installed in this kiln; models: ${Object.keys(MATTE_MODELS).join(', ')}.`,
      {
        details: [{ path: 'model', message: `one of ${Object.keys(MATTE_MODELS).join(', ')}` }],
      },
    );
  return m;
}

export interface Picture {
  width: number;
  height: number;
  /** Interleaved RGB, 0–255. */
  rgb: Buffer;
  /** The input's own alpha (0–255) when it has one. */
  alpha?: Buffer;
}

/** Decodes the input (orientation applied) to raw RGB, keeping its alpha apart. */
export async function readPicture(file: InputFile, ctx: RunContext, prepare?: (img: Sharp) => Sharp): Promise<Picture> {
  let img = (await openInput(file, ctx.workDir, ctx.signal)).autoOrient().toColourspace('srgb');
  if (prepare) img = prepare(img);
  const { data, info } = await img.ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const n = info.width * info.height;
  const rgb = Buffer.alloc(n * 3);
  const alpha = Buffer.alloc(n);
  let opaque = true;
  for (let i = 0; i < n; i++) {
    rgb[i * 3] = data[i * 4]!;
    rgb[i * 3 + 1] = data[i * 4 + 1]!;
    rgb[i * 3 + 2] = data[i * 4 + 2]!;
    alpha[i] = data[i * 4 + 3]!;
    if (alpha[i] !== 255) opaque = false;
  }
  return { width: info.width, height: info.height, rgb, ...(opaque ? {} : { alpha }) };
}

/** The picture through a size×size median filter (colour channels; the alpha is kept). */
export async function medianFiltered(p: Picture, size: number): Promise<Picture> {
  return { ...p, rgb: await medianRaw(p.rgb, { width: p.width, height: p.height, channels: 3 }, size) };
}

/** The RGB the model sees: transparent parts of the input over white, as a viewer would show them. */
export function visibleRgb(p: Picture): Buffer {
  if (!p.alpha) return p.rgb;
  const out = Buffer.alloc(p.rgb.length);
  for (let i = 0; i < p.alpha.length; i++) {
    const a = p.alpha[i]! / 255;
    for (let c = 0; c < 3; c++) out[i * 3 + c] = Math.round(p.rgb[i * 3 + c]! * a + 255 * (1 - a));
  }
  return out;
}

export interface MatteResult {
  /** Foreground alpha 0–1, width × height. */
  alpha: Float32Array;
  info: RunInfo;
}

/** ISNet's foreground matte of the picture (never above the input's own alpha), progress mapped onto [from, to] percent. */
export async function matte(p: Picture, model: MatteModel, ctx: RunContext, from = 5, to = 80): Promise<MatteResult> {
  const sharp = await getSharp();
  ctx.progress(from, 'matting');
  const m = await foregroundMatte(sharp(visibleRgb(p), { raw: { width: p.width, height: p.height, channels: 3 } }), p, model, {
    dataDir: ctx.dataDir,
    signal: ctx.signal,
    progress: (f, stage) => ctx.progress(from + (to - from) * f, stage),
  });
  const alpha = new Float32Array(p.width * p.height);
  // What the input already had transparent stays transparent.
  for (let i = 0; i < alpha.length; i++) alpha[i] = Math.min(m.alpha[i]!, p.alpha ? p.alpha[i]! : 255) / 255;
  ctx.progress(to, 'compositing');
  return { alpha, info: m.info };
}

/** Result data every background tool reports. */
export function runData(r: MatteResult, model: string): Record<string, unknown> {
  let sum = 0;
  for (const a of r.alpha) sum += a;
  return {
    model,
    device: r.info.device,
    provider: r.info.provider,
    foregroundRatio: Math.round((sum / r.alpha.length) * 10000) / 10000,
    warm: r.info.warm,
    loadMs: r.info.loadMs,
    runMs: r.info.runMs,
  };
}

// ---- blurs -------------------------------------------------------------------------------------

/** One box pass of radius r along rows (horizontal) or columns, edges clamped to the window inside the image. */
function boxPass(src: Float32Array, dst: Float32Array, w: number, h: number, r: number, horizontal: boolean): void {
  const len = horizontal ? w : h;
  const lines = horizontal ? h : w;
  const step = horizontal ? 1 : w;
  for (let l = 0; l < lines; l++) {
    const base = horizontal ? l * w : l;
    let sum = 0;
    let lo = 0;
    let hi = -1;
    for (let i = 0; i < len; i++) {
      const want = Math.min(len - 1, i + r);
      while (hi < want) sum += src[base + ++hi * step]!;
      const from = Math.max(0, i - r);
      while (lo < from) sum -= src[base + lo++ * step]!;
      dst[base + i * step] = sum / (hi - lo + 1);
    }
  }
}

/** Box mean of radius r (separable, exact). */
export function boxMean(src: Float32Array, w: number, h: number, r: number): Float32Array {
  if (r < 1) return src.slice();
  const tmp = new Float32Array(src.length);
  const out = new Float32Array(src.length);
  boxPass(src, tmp, w, h, r, true);
  boxPass(tmp, out, w, h, r, false);
  return out;
}

/** Gaussian-like blur of standard deviation sigma: three box passes. */
export function blurPlane(src: Float32Array, w: number, h: number, sigma: number): Float32Array {
  if (sigma < 0.5) return src.slice();
  const r = Math.max(1, Math.round((Math.sqrt(4 * sigma * sigma + 1) - 1) / 2));
  return boxMean(boxMean(boxMean(src, w, h, r), w, h, r), w, h, r);
}

function channel(rgb: Buffer | Float32Array, n: number, c: number, scale = 1 / 255): Float32Array {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = rgb[i * 3 + c]! * scale;
  return out;
}

/**
 * Weighted blur of RGB: Σ w·I / Σ w per channel. With w = 1 − alpha it is the background alone,
 * blurred without the subject bleeding into it; where no weight is near, `fallback` is used.
 */
function weightedBlur(p: Picture, weight: Float32Array, sigma: number, fallback?: Float32Array[]): Float32Array[] {
  const n = p.width * p.height;
  const den = blurPlane(weight, p.width, p.height, sigma);
  const out: Float32Array[] = [];
  for (let c = 0; c < 3; c++) {
    const num = channel(p.rgb, n, c);
    for (let i = 0; i < n; i++) num[i]! *= weight[i]!;
    const b = blurPlane(num, p.width, p.height, sigma);
    for (let i = 0; i < n; i++) {
      const d = den[i]!;
      const own = fallback ? fallback[c]![i]! : b[i]! / Math.max(d, 1e-6);
      b[i] = d > 1e-3 ? b[i]! / d : own;
    }
    out.push(b);
  }
  return out;
}

// ---- mask refinement ---------------------------------------------------------------------------

/**
 * Edge refinement, level 1–3: a guided filter (He et al.) with the picture's luminance as guide snaps
 * the matte's soft edge to the real edges (hair, fingers); radius grows with the level and the image.
 * Only the transition band changes, so solid subject and clear background stay exactly as they were.
 */
export function refineEdges(p: Picture, alpha: Float32Array, level: number): Float32Array {
  if (level <= 0) return alpha;
  const { width: w, height: h } = p;
  const n = w * h;
  const unit = Math.max(1, Math.round(Math.min(w, h) / 320));
  const r = level * 2 * unit;
  const eps = [0, 1e-2, 4e-3, 1e-3][level]!;
  const I = new Float32Array(n);
  for (let i = 0; i < n; i++) I[i] = (0.299 * p.rgb[i * 3]! + 0.587 * p.rgb[i * 3 + 1]! + 0.114 * p.rgb[i * 3 + 2]!) / 255;
  const II = new Float32Array(n);
  const Ip = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    II[i] = I[i]! * I[i]!;
    Ip[i] = I[i]! * alpha[i]!;
  }
  const mI = boxMean(I, w, h, r);
  const mp = boxMean(alpha, w, h, r);
  const mII = boxMean(II, w, h, r);
  const mIp = boxMean(Ip, w, h, r);
  const a = new Float32Array(n);
  const b = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const v = mII[i]! - mI[i]! * mI[i]!;
    a[i] = (mIp[i]! - mI[i]! * mp[i]!) / (v + eps);
    b[i] = mp[i]! - a[i]! * mI[i]!;
  }
  const ma = boxMean(a, w, h, r);
  const mb = boxMean(b, w, h, r);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const band = mp[i]! > 0.01 && mp[i]! < 0.99;
    out[i] = band ? Math.min(1, Math.max(0, ma[i]! * I[i]! + mb[i]!)) : alpha[i]!;
  }
  return out;
}

/** Softens the mask's edge by `radius` pixels (0 = unchanged). */
export function feather(alpha: Float32Array, w: number, h: number, radius: number): Float32Array {
  return radius > 0 ? blurPlane(alpha, w, h, radius / 2) : alpha;
}

/**
 * Removes the old background's colour from semi-transparent edge pixels. With the compositing
 * equation I = a·F + (1 − a)·B, B is estimated as the nearby background (blurred without the subject)
 * and F solved for; where a is too small for that to be stable, the nearby subject colour is used.
 * `strength` 0–1 blends between the original and the cleaned colour.
 */
export function decontaminate(p: Picture, alpha: Float32Array, strength = 1): Buffer {
  const { width: w, height: h } = p;
  const n = w * h;
  const sigma = Math.max(2, Math.min(w, h) / 60);
  const inv = new Float32Array(n);
  for (let i = 0; i < n; i++) inv[i] = (1 - alpha[i]!) ** 2;
  const sq = new Float32Array(n);
  for (let i = 0; i < n; i++) sq[i] = alpha[i]! ** 2;
  const B = weightedBlur(p, inv, sigma);
  const F = weightedBlur(p, sq, sigma);
  const out = Buffer.from(p.rgb);
  for (let i = 0; i < n; i++) {
    const a = alpha[i]!;
    if (a <= 0.004 || a >= 0.996) continue;
    // Trust the solved colour from a = 0.3 up; below, lean on the neighbouring subject colour.
    const t = Math.min(1, Math.max(0, (a - 0.05) / 0.25));
    for (let c = 0; c < 3; c++) {
      const I = p.rgb[i * 3 + c]! / 255;
      const solved = Math.min(1, Math.max(0, (I - (1 - a) * B[c]![i]!) / a));
      const clean = t * solved + (1 - t) * F[c]![i]!;
      out[i * 3 + c] = Math.round(255 * (I + strength * (clean - I)));
    }
  }
  return out;
}

// ---- backgrounds -------------------------------------------------------------------------------

/** An opaque RGB background, 0–1 per channel, three planes. */
export type Background = Float32Array[];

export function solidBackground(n: number, color: string): Background {
  const c = parseColor(color);
  return [c.r, c.g, c.b].map((v) => new Float32Array(n).fill(v / 255));
}

/**
 * Linear gradient as CSS draws it: 0° runs bottom → top, 90° left → right, 180° top → bottom;
 * color1 at the start, color2 at the end, the line long enough to reach both corners.
 */
export function gradientBackground(w: number, h: number, color1: string, color2: string, angleDeg: number): Background {
  const a = parseColor(color1);
  const b = parseColor(color2);
  const th = (angleDeg * Math.PI) / 180;
  const dx = Math.sin(th);
  const dy = -Math.cos(th);
  const half = (Math.abs(w * dx) + Math.abs(h * dy)) / 2;
  const planes = [new Float32Array(w * h), new Float32Array(w * h), new Float32Array(w * h)];
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      const proj = (x + 0.5 - w / 2) * dx + (y + 0.5 - h / 2) * dy;
      const t = half > 0 ? Math.min(1, Math.max(0, (proj + half) / (2 * half))) : 0;
      const i = y * w + x;
      planes[0]![i] = (a.r + (b.r - a.r) * t) / 255;
      planes[1]![i] = (a.g + (b.g - a.g) * t) / 255;
      planes[2]![i] = (a.b + (b.b - a.b) * t) / 255;
    }
  return planes;
}

/** Blur sigma in pixels for an intensity 0–100: at 100, 1/40 of the longer side. */
export function blurSigma(p: Picture, intensity: number): number {
  return (intensity / 100) * (Math.max(p.width, p.height) / 40);
}

/** The picture's own background, blurred without the subject (no halo of the subject around it). */
export function blurredBackground(p: Picture, alpha: Float32Array, sigma: number): Background {
  const n = p.width * p.height;
  const plain = [0, 1, 2].map((c) => blurPlane(channel(p.rgb, n, c), p.width, p.height, sigma));
  const w = new Float32Array(n);
  for (let i = 0; i < n; i++) w[i] = 1 - alpha[i]!;
  return weightedBlur(p, w, sigma, plain);
}

/** Another image, scaled to cover the picture and centred; blurred when sigma > 0. */
export async function imageBackground(file: InputFile, p: Picture, ctx: RunContext, sigma = 0): Promise<Background> {
  const img = (await openInput(file, ctx.workDir, ctx.signal))
    .autoOrient()
    .toColourspace('srgb')
    .flatten({ background: '#ffffff' })
    .resize(p.width, p.height, { fit: 'cover', position: 'centre' });
  if (sigma >= 0.5) img.blur(sigma);
  const rgb = await img.removeAlpha().raw().toBuffer();
  const n = p.width * p.height;
  return [0, 1, 2].map((c) => channel(rgb, n, c));
}

/** A soft drop shadow of the subject: its matte, offset down-right and blurred, times `opacity` 0–1. */
export function dropShadow(alpha: Float32Array, w: number, h: number, opacity: number): Float32Array {
  const s = Math.min(w, h);
  const ox = Math.round(s * 0.02);
  const oy = Math.round(s * 0.03);
  const shifted = new Float32Array(w * h);
  for (let y = oy; y < h; y++) for (let x = ox; x < w; x++) shifted[y * w + x] = alpha[(y - oy) * w + (x - ox)]!;
  const out = blurPlane(shifted, w, h, s * 0.025);
  for (let i = 0; i < out.length; i++) out[i]! *= opacity * 0.85;
  return out;
}

// ---- compositing and output -------------------------------------------------------------------

export interface Layers {
  width: number;
  height: number;
  /** Subject colour, interleaved RGB 0–255 (decontaminated or the original). */
  fg: Buffer;
  alpha: Float32Array;
  /** Omitted: transparent. */
  background?: Background;
  shadow?: Float32Array;
}

/** Subject over shadow over background. RGB when there is a background, RGBA when transparent. */
export function composite(l: Layers): { data: Buffer; channels: 3 | 4 } {
  const n = l.width * l.height;
  if (l.background) {
    const out = Buffer.alloc(n * 3);
    for (let i = 0; i < n; i++) {
      const a = l.alpha[i]!;
      const dark = 1 - (l.shadow?.[i] ?? 0);
      for (let c = 0; c < 3; c++) out[i * 3 + c] = Math.round(l.fg[i * 3 + c]! * a + 255 * l.background[c]![i]! * dark * (1 - a));
    }
    return { data: out, channels: 3 };
  }
  const out = Buffer.alloc(n * 4);
  for (let i = 0; i < n; i++) {
    const a = l.alpha[i]!;
    const s = l.shadow?.[i] ?? 0;
    const A = a + s * (1 - a);
    // The shadow is black: the colour is the subject's share of the total coverage.
    const k = A > 0 ? a / A : 0;
    for (let c = 0; c < 3; c++) out[i * 4 + c] = Math.round(l.fg[i * 3 + c]! * k);
    out[i * 4 + 3] = Math.round(A * 255);
  }
  return { data: out, channels: 4 };
}

export async function writeComposite(
  ctx: RunContext,
  img: { data: Buffer; channels: 3 | 4; width: number; height: number },
  format: ImageFormat,
): Promise<OutputFile> {
  const sharp = await getSharp();
  const out = ctx.out(format);
  const s = sharp(img.data, { raw: { width: img.width, height: img.height, channels: img.channels } });
  await writeImage(s, out, format, format === 'png' ? {} : { quality: format === 'avif' ? 60 : 90 });
  return outputFile(out);
}
