/**
 * sharp (libvips in process). Loaded lazily so commands that never touch images start fast.
 * Formats sharp cannot write (HEIC/HEVC, JXL) or read (JXL) go through the Debian `vips` CLI.
 */
import { rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Sharp, SharpOptions } from 'sharp';
import { KilnError } from '../core/errors.js';
import { exec } from '../core/process.js';
import { requireEngine } from './registry.js';

type SharpFn = typeof import('sharp').default;
let sharpMod: Promise<SharpFn> | undefined;

export function getSharp(): Promise<SharpFn> {
  sharpMod ??= import('sharp').then((m) => {
    const s = m.default;
    // The daemon runs several jobs at once; keep libvips' own thread pool to the machine's cores.
    s.concurrency(0);
    return s;
  });
  return sharpMod;
}

/** Largest input accepted, in pixels (decompression bombs). Override with KILN_MAX_PIXELS. */
export const MAX_INPUT_PIXELS = Number(process.env.KILN_MAX_PIXELS) || 268_402_689;

export const IMAGE_FORMATS = ['jpg', 'png', 'webp', 'avif', 'tiff', 'gif', 'heic', 'heif', 'jxl'] as const;
export type ImageFormat = (typeof IMAGE_FORMATS)[number];

export interface EncodeOptions {
  quality?: number;
  progressive?: boolean;
  lossless?: boolean;
  /** 0-9 (png) / 0-6 (webp) / 0-9 (avif): CPU spent on compression. */
  effort?: number;
  /** Keep EXIF/ICC/XMP (default: sharp's default, which drops them). */
  keepMetadata?: boolean;
}

/**
 * Opens an image for processing. JXL (which sharp cannot decode) is converted first with vips.
 * `animated` keeps all frames of GIF/WebP.
 */
export async function openImage(file: string, opts: { animated?: boolean; workDir?: string; ext?: string } & SharpOptions = {}): Promise<Sharp> {
  const sharp = await getSharp();
  const { animated, workDir, ext, ...rest } = opts;
  let src = file;
  if (ext === 'jxl') {
    if (!workDir) throw new KilnError('INTERNAL', 'openImage needs a workDir for JXL input');
    const vips = await requireEngine('vips');
    src = path.join(workDir, `decoded-${Date.now()}-${Math.random().toString(36).slice(2)}.png`);
    await exec(vips, ['copy', file, src], { failCode: 'UNSUPPORTED_INPUT' });
  }
  return sharp(src, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error', animated: animated ?? false, ...rest });
}

/** Normalises user spellings (jpeg → jpg, tif → tiff). */
export function normalizeFormat(f: string): ImageFormat {
  const x = f.toLowerCase();
  if (x === 'jpeg') return 'jpg';
  if (x === 'tif') return 'tiff';
  if ((IMAGE_FORMATS as readonly string[]).includes(x)) return x as ImageFormat;
  throw new KilnError('VALIDATION_ERROR', `Unsupported image format ${f}.`);
}

/** Maps a sniffed extension to an output format sharp writes; others (bmp, ico, psd…) become png. */
export function sameFormatAs(ext: string | undefined): ImageFormat {
  const x = (ext ?? '').toLowerCase();
  if (x === 'jpeg') return 'jpg';
  if ((IMAGE_FORMATS as readonly string[]).includes(x)) return x as ImageFormat;
  return 'png';
}

/** Applies encoder settings for a format sharp writes natively. */
export function encode(img: Sharp, format: ImageFormat, o: EncodeOptions = {}): Sharp {
  if (o.keepMetadata) img = img.keepMetadata();
  const q = o.quality;
  switch (format) {
    case 'jpg':
      return img.jpeg({ quality: q ?? 85, progressive: o.progressive ?? false, mozjpeg: true });
    case 'png':
      return img.png({ compressionLevel: o.effort ?? 6, progressive: o.progressive ?? false, ...(q !== undefined && q < 100 ? { palette: true, quality: q } : {}) });
    case 'webp':
      return img.webp({ quality: q ?? 80, lossless: o.lossless ?? false, effort: o.effort ?? 4 });
    case 'avif':
      return img.avif({ quality: q ?? 50, lossless: o.lossless ?? false, effort: o.effort ?? 4 });
    case 'tiff':
      return img.tiff({ quality: q ?? 80, compression: 'lzw' });
    case 'gif':
      return img.gif({ effort: o.effort ?? 7 });
    case 'heif':
      // sharp's HEIF writer is AV1-coded HEIF; HEVC-coded HEIC goes through vips (see writeImage).
      return img.heif({ quality: q ?? 50, compression: 'av1', lossless: o.lossless ?? false });
    default:
      throw new KilnError('INTERNAL', `encode() cannot write ${format} in process`);
  }
}

/**
 * Writes an image in any of IMAGE_FORMATS. HEIC (HEVC) and JXL are encoded by the Debian vips CLI from a
 * lossless intermediate, since sharp's prebuilt libvips has no encoder for them.
 */
export async function writeImage(img: Sharp, outPath: string, format: ImageFormat, o: EncodeOptions = {}): Promise<void> {
  if (format === 'heic' || format === 'jxl') {
    const vips = await requireEngine('vips');
    const tmp = `${outPath}.tmp.png`;
    try {
      await (o.keepMetadata ? img.keepMetadata() : img).png({ compressionLevel: 1 }).toFile(tmp);
      const q = String(o.quality ?? (format === 'heic' ? 50 : 75));
      const args =
        format === 'heic'
          ? ['heifsave', tmp, outPath, '--compression', 'hevc', '-Q', q, ...(o.lossless ? ['--lossless'] : [])]
          : ['jxlsave', tmp, outPath, '-Q', q, ...(o.lossless ? ['--lossless'] : [])];
      await exec(vips, args);
    } finally {
      await rm(tmp, { force: true });
    }
    return;
  }
  const tmp = `${outPath}.partial`;
  try {
    await encode(img, format, o).toFile(tmp);
    await rename(tmp, outPath);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}
