/**
 * What erase-object, ai-canvas-expand, colorize and restore-photo share: the decoded image as RGB
 * plus its alpha, the output format/quality settings of the catalog, and writing the result. Not a
 * tool (it is not listed in ../list.ts).
 */
import { z } from 'zod';
import type { InputFile, OutputFile, RunContext } from '../../../core/tool.js';
import {
  getSharp,
  type ImageFormat,
  lossyQuality,
  normalizeFormat,
  sameFormatAs,
  supportsAlpha,
  writeImage,
} from '../../../engines/sharp.js';
import { featureNotInstalled, isBundleFileInstalled, isBundleInstalled, requireImportedFile } from '../../bundles.js';
import { openInput } from '../_shared/decode.js';
import { outputFile } from '../../_shared/output.js';

export const FORMATS = ['auto', 'png', 'jpg', 'jpeg', 'webp', 'tiff', 'gif', 'avif', 'heic', 'heif', 'jxl'] as const;

export const formatSetting = z.enum(FORMATS).default('auto').describe('Output format (auto: the input’s).');
export const qualitySetting = z.number().int().min(1).max(100).default(95).describe('Output quality (lossy formats).');

export interface RgbImage {
  width: number;
  height: number;
  /** Interleaved RGB. */
  rgb: Uint8Array;
  /** width × height alpha, or null when the input has none. */
  alpha: Uint8Array | null;
}

export async function decodeRgb(input: InputFile, ctx: RunContext): Promise<RgbImage> {
  const src = await openInput(input, ctx.workDir, ctx.signal);
  const meta = await src.metadata();
  const { data, info } = await src.autoOrient().ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const n = info.width * info.height;
  const rgb = new Uint8Array(n * 3);
  const alpha = meta.hasAlpha ? new Uint8Array(n) : null;
  for (let p = 0; p < n; p++) {
    rgb[p * 3] = data[p * 4]!;
    rgb[p * 3 + 1] = data[p * 4 + 1]!;
    rgb[p * 3 + 2] = data[p * 4 + 2]!;
    if (alpha) alpha[p] = data[p * 4 + 3]!;
  }
  return { width: info.width, height: info.height, rgb, alpha };
}

export function outFormat(input: InputFile, format: (typeof FORMATS)[number] | undefined): ImageFormat {
  return !format || format === 'auto' ? sameFormatAs(input.type?.ext) : normalizeFormat(format);
}

export async function writeRgb(ctx: RunContext, img: RgbImage, format: ImageFormat, quality?: number): Promise<OutputFile> {
  const sharp = await getSharp();
  const n = img.width * img.height;
  const keepAlpha = img.alpha !== null && supportsAlpha(format);
  const ch = keepAlpha ? 4 : 3;
  const buf = Buffer.alloc(n * ch);
  for (let p = 0; p < n; p++) {
    buf[p * ch] = img.rgb[p * 3]!;
    buf[p * ch + 1] = img.rgb[p * 3 + 1]!;
    buf[p * ch + 2] = img.rgb[p * 3 + 2]!;
    if (keepAlpha) buf[p * ch + 3] = img.alpha![p]!;
  }
  const out = ctx.out(format);
  ctx.progress(92, 'encoding');
  await writeImage(sharp(buf, { raw: { width: img.width, height: img.height, channels: ch } }), out, format, {
    quality: lossyQuality(format, quality),
  });
  return outputFile(out);
}

export const ERASER = 'object-eraser-colorize';

/** The model file of a bundle is installed (an import-only file counts once imported). */
export const hasModelFile = (dataDir: string, bundle: string, file: string) => isBundleFileInstalled(dataDir, bundle, file);

/**
 * FEATURE_NOT_INSTALLED for a missing model file: the bundle (with `what`, e.g. which setting needs it),
 * or the file an imported archive has not supplied yet. Call it when hasModelFile() said no.
 */
export async function missingModelFile(dataDir: string, toolId: string, bundle: string, file: string, what: string): Promise<never> {
  if (await isBundleInstalled(dataDir, bundle)) await requireImportedFile(dataDir, toolId, bundle, file, `${toolId} (${what})`);
  throw featureNotInstalled(toolId, [bundle], what);
}

/** 1-D pass of dilate(): out[i] = 1 when a set pixel lies within r along the line. */
function grow1d(src: Uint8Array, dst: Uint8Array, start: number, step: number, n: number, r: number): void {
  let last = Number.NEGATIVE_INFINITY;
  for (let k = 0; k < n; k++) {
    if (src[start + k * step]) last = k;
    if (k - last <= r) dst[start + k * step] = 1;
  }
  last = Number.POSITIVE_INFINITY;
  for (let k = n - 1; k >= 0; k--) {
    if (src[start + k * step]) last = k;
    if (last - k <= r) dst[start + k * step] = 1;
  }
}

/** Grows a 0/1 mask by `r` pixels (square neighbourhood, two separable passes). */
export function dilate(mask: Uint8Array, w: number, h: number, r: number): Uint8Array {
  if (r <= 0) return mask;
  const tmp = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) grow1d(mask, tmp, y * w, 1, w, r);
  const out = new Uint8Array(w * h);
  for (let x = 0; x < w; x++) grow1d(tmp, out, x, w, h, r);
  return out;
}

/** The run info of a model for result data, or nulls for a classical method. */
export function modelData(info: { model: string; device: string; provider: string; runMs: number } | null): Record<string, unknown> {
  return info ? { model: info.model, device: info.device, provider: info.provider, modelMs: info.runMs } : { model: null };
}
