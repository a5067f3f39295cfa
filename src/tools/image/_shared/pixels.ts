/**
 * Raw RGBA buffers for the per-pixel tools: decode once with sharp (EXIF orientation applied), loop over a
 * typed array, encode back in the input's format (PNG when the result needs alpha the format lacks).
 */
import type { InputFile, OutputFile, RunContext } from '../../../core/tool.js';
import { inputMetadata, sameFormatAs, writeImage, type ImageFormat } from '../../../engines/sharp.js';
import { openInput } from './decode.js';
import { outputFile } from '../../_shared/output.js';

export interface Raw {
  data: Uint8ClampedArray;
  width: number;
  height: number;
  /**
   * Whether the input had an alpha channel (readRgba adds one to every picture). writeRaw writes an opaque
   * result without alpha only when the input had none, so an RGB photo does not come back as RGBA and an
   * RGBA file keeps its layout.
   */
  hadAlpha?: boolean;
}

export async function readRgba(file: InputFile, workDir: string, maxSide?: number): Promise<Raw> {
  const img = await openInput(file, workDir);
  const { hasAlpha } = await inputMetadata(img);
  img.autoOrient();
  if (maxSide) img.resize({ width: maxSide, height: maxSide, fit: 'inside', withoutEnlargement: true });
  const { data, info } = await img.ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return {
    data: new Uint8ClampedArray(data.buffer, data.byteOffset, data.length),
    width: info.width,
    height: info.height,
    hadAlpha: hasAlpha,
  };
}

const ALPHA_FORMATS: ImageFormat[] = ['png', 'webp', 'avif', 'tiff', 'gif', 'heif', 'heic', 'jxl'];

/** Output format for a result from this input; `needsAlpha` moves JPEG (and others without alpha) to PNG. */
export function outputFormat(file: InputFile, needsAlpha = false): ImageFormat {
  const f = sameFormatAs(file.type?.ext);
  return needsAlpha && !ALPHA_FORMATS.includes(f) ? 'png' : f;
}

export async function writeRaw(ctx: RunContext, raw: Raw, format: ImageFormat, suffix = ''): Promise<OutputFile> {
  const { getSharp } = await import('../../../engines/sharp.js');
  const sharp = await getSharp();
  const out = ctx.out(format, suffix);
  const img = sharp(Buffer.from(raw.data.buffer, raw.data.byteOffset, raw.data.length), {
    raw: { width: raw.width, height: raw.height, channels: 4 },
  });
  await writeImage(img, out, format, { quality: format === 'jpg' ? 92 : undefined, trimAlpha: raw.hadAlpha === false });
  return outputFile(out);
}

/** sRGB 8-bit -> linear light, as a lookup table (IEC 61966-2-1). */
export const SRGB_TO_LINEAR: Float32Array = (() => {
  const t = new Float32Array(256);
  for (let i = 0; i < 256; i++) {
    const c = i / 255;
    t[i] = c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }
  return t;
})();

// 4096 steps keep the round trip exact for 8-bit values while avoiding a pow() per channel.
const LIN_STEPS = 4095;
const LINEAR_TO_SRGB: Uint8Array = (() => {
  const t = new Uint8Array(LIN_STEPS + 1);
  for (let i = 0; i <= LIN_STEPS; i++) {
    const c = i / LIN_STEPS;
    t[i] = Math.round(255 * (c <= 0.0031308 ? 12.92 * c : 1.055 * c ** (1 / 2.4) - 0.055));
  }
  return t;
})();

export function linearToSrgb8(v: number): number {
  return LINEAR_TO_SRGB[v <= 0 ? 0 : v >= 1 ? LIN_STEPS : Math.round(v * LIN_STEPS)]!;
}
