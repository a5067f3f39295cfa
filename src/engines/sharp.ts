/**
 * sharp (libvips in process). Loaded lazily so commands that never touch images start fast.
 * Formats sharp cannot write (HEIC/HEVC, JXL) or read (JXL) go through the Debian `vips` CLI.
 */
import { rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Metadata, Sharp, SharpOptions } from 'sharp';
import { KilnError } from '../core/errors.js';
import { MAX_INPUT_PIXELS } from '../core/limits.js';
import { exec } from '../core/process.js';
import { requireEngine } from './registry.js';
import { rasterizeEps } from './eps-raster.js';
import { tiffForVipsCli } from './tiff-probe.js';

type SharpFn = typeof import('sharp').default;
let sharpMod: Promise<SharpFn> | undefined;

export function getSharp(): Promise<SharpFn> {
  sharpMod ??= import('sharp').then(
    (m) => setUp(m.default),
    // sharp's ES build reads its package.json with an import attribute, which node parses from 20.10 on;
    // on 20.9 (inside `engines`) the tsc build, which a deployed release runs, failed every image tool
    // with "Unexpected token 'with'". Its CommonJS build is the same code. (The bundle's sharp is
    // CommonJS already: scripts/bundle.mjs.)
    (e: unknown) => {
      if (!(e instanceof SyntaxError)) throw e;
      return setUp(createRequire(import.meta.url)('sharp') as SharpFn);
    },
  );
  return sharpMod;
}

function setUp(s: SharpFn): SharpFn {
  // The daemon runs several jobs at once; keep libvips' own thread pool to the machine's cores.
  s.concurrency(0);
  // No libvips operation cache: every job reads a new file, so it never hits, while it would hold up to
  // 50 MB of pixels and keep 20 input files open (deleted workspaces included) in a long-running daemon.
  s.cache(false);
  return s;
}

export interface RawShape {
  width: number;
  height: number;
  channels: 1 | 2 | 3 | 4;
}

/**
 * A size×size median of raw pixels, same shape out. libvips refuses a window larger than the image
 * ("rank: window too large", which reached users as INTERNAL on a 1×1 or 2×3 input), so a smaller
 * image is padded by repeating its edge pixels, filtered, and cropped back.
 */
export async function medianRaw(data: Uint8Array, shape: RawShape, size: number): Promise<Buffer> {
  const sharp = await getSharp();
  const { width, height, channels } = shape;
  const small = width < size || height < size;
  const pad = small ? size : 0;
  const W = width + 2 * pad;
  const H = height + 2 * pad;
  let src = data;
  if (small) {
    src = new Uint8Array(W * H * channels);
    for (let y = 0; y < H; y++) {
      const sy = Math.min(height - 1, Math.max(0, y - pad));
      for (let x = 0; x < W; x++) {
        const sx = Math.min(width - 1, Math.max(0, x - pad));
        for (let c = 0; c < channels; c++) src[(y * W + x) * channels + c] = data[(sy * width + sx) * channels + c]!;
      }
    }
  }
  const filtered = await sharp(src, { raw: { width: W, height: H, channels } })
    .median(size)
    .raw()
    .toBuffer({ resolveWithObject: true });
  // sharp hands grey back as sRGB (one band as three, grey + alpha as four): keep grey and alpha.
  const out = filtered.info.channels === channels ? filtered.data : repack(filtered.data, filtered.info.channels, channels as 1 | 2);
  if (!small) return out;
  const row = width * channels;
  const crop = Buffer.alloc(height * row);
  for (let y = 0; y < height; y++) out.copy(crop, y * row, ((y + pad) * W + pad) * channels, ((y + pad) * W + pad) * channels + row);
  return crop;
}

/** Grey (and alpha) bands out of sRGB pixels whose three colour bands are equal. */
function repack(data: Buffer, from: number, to: 1 | 2): Buffer {
  const n = data.length / from;
  const out = Buffer.alloc(n * to);
  for (let i = 0; i < n; i++) {
    out[i * to] = data[i * from]!;
    if (to === 2) out[i * to + 1] = data[i * from + from - 1]!;
  }
  return out;
}

/** Formats sharp decodes itself (the check below leaves the others to their own engines). */
const SHARP_READS = new Set(['jpg', 'png', 'webp', 'avif', 'tiff', 'gif']);

/**
 * Whether `file` (of sniffed kind `kind`) decodes completely: false when sharp cannot read every pixel,
 * undefined for kinds sharp does not read. Used on failures only, to tell a bad input from our own.
 * failOn 'error', not 'truncated': libtiff reports strips that run past the end of the file as a read
 * error, and at 'truncated' libvips filled them with black and called the TIFF whole.
 */
export async function decodesFully(file: string | Buffer, kind: string | undefined): Promise<boolean | undefined> {
  if (!kind || !SHARP_READS.has(kind)) return undefined;
  const sharp = await getSharp();
  try {
    await sharp(file, { failOn: 'error', limitInputPixels: MAX_INPUT_PIXELS, animated: true }).raw().toBuffer();
    return true;
  } catch {
    return false;
  }
}

/**
 * Environment for the Debian vips CLI. Loading sharp sets VIPSHOME to its bundled libvips, which makes the
 * system vips look for its heif/jxl modules there and fail with "not a known file format".
 */
export function vipsEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.VIPSHOME;
  return env;
}

export { MAX_INPUT_PIXELS } from '../core/limits.js';

export const IMAGE_FORMATS = ['jpg', 'png', 'webp', 'avif', 'tiff', 'gif', 'heic', 'heif', 'jxl'] as const;
export type ImageFormat = (typeof IMAGE_FORMATS)[number];

export interface EncodeOptions {
  quality?: number;
  progressive?: boolean;
  lossless?: boolean;
  /** 0-9 (png) / 0-6 (webp) / 0-9 (avif, heif): CPU spent on compression. */
  effort?: number;
  /** Keep EXIF/ICC/XMP (default: sharp's default, which drops them). */
  keepMetadata?: boolean;
  /** Spend CPU for smaller files (mozjpeg trellis for JPEG). */
  optimizeSize?: boolean;
  /** Pixels per inch a TIFF records (writeImage: the input's own, else 72). */
  density?: number;
  /** writeImage: drop the alpha channel when every pixel of the result is opaque (withoutUnusedAlpha). */
  trimAlpha?: boolean;
}

function tempName(workDir: string, ext: string): string {
  return path.join(workDir, `decoded-${Date.now()}-${Math.random().toString(36).slice(2)}.${ext}`);
}

/**
 * Whether openImage hands a file of kind `ext` to sharp as it is (bytes in memory will do), rather than
 * to another engine first. sharp's bundled libheif decodes AV1 only; iPhone HEIC is HEVC, which Debian's
 * libheif (through the vips CLI) reads. Without a workDir HEIF stays with sharp (AV1-coded files open).
 */
export function decodesInProcess(ext: string | undefined, workDir?: string): boolean {
  return !(ext === 'jxl' || ext === 'eps' || ((ext === 'heic' || ext === 'heif') && workDir));
}

/**
 * Opens an image (a path, or bytes held in memory) for processing. JXL (which sharp cannot decode) is
 * converted first with vips, EPS is rasterized by Ghostscript: both need `file` as a path. A TIFF sharp
 * cannot read (engines/tiff-probe.ts) is converted with vips too. `animated` keeps all frames of GIF/WebP.
 */
export async function openImage(
  file: string | Buffer,
  opts: { animated?: boolean; workDir?: string; ext?: string; signal?: AbortSignal } & SharpOptions = {},
): Promise<Sharp> {
  const sharp = await getSharp();
  const { animated, workDir, ext, signal, ...rest } = opts;
  let src = file;
  // A TIFF sharp's libvips cannot read (8-bit Lab, LZMA/ZSTD) goes through the vips CLI as a .v file.
  const viaCli = ext === 'tiff' && workDir ? await tiffForVipsCli(file) : undefined;
  if (viaCli && workDir) {
    let input = file;
    if (typeof input !== 'string') await writeFile((input = tempName(workDir, 'tif')), file);
    src = tempName(workDir, 'v');
    await exec(await requireEngine('vips'), [viaCli.op, input, src, ...viaCli.extra], {
      failCode: 'UNSUPPORTED_INPUT',
      signal,
      env: vipsEnv(),
    });
  } else if (!decodesInProcess(ext, workDir)) {
    if (!workDir) throw new KilnError('INTERNAL', `openImage needs a workDir for ${ext!.toUpperCase()} input`);
    if (typeof file !== 'string') throw new KilnError('INTERNAL', `openImage needs ${ext!.toUpperCase()} input on disk`);
    if (ext === 'eps') await rasterizeEps(file, (src = tempName(workDir, 'png')), { signal });
    else {
      // As libvips' own uncompressed format (as the TIFFs above), not PNG: a 10.6 MP HEIC took 2.1 s to
      // become a PNG and 0.8 s to become a .v file, which sharp then maps instead of inflating (0.25 s).
      // The pixel limit, checked from the header before this, bounds its size (100 MP: 300 MB at 8-bit RGB).
      src = tempName(workDir, 'v');
      await exec(await requireEngine('vips'), ['copy', file, src], { failCode: 'UNSUPPORTED_INPUT', signal, env: vipsEnv() });
    }
  }
  return sharp(src, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error', animated: animated ?? false, ...rest });
}

/** Formats whose files may hold several frames that tools should keep. */
export function isAnimatedFormat(ext: string | undefined): boolean {
  return ext === 'gif' || ext === 'webp';
}

/** Formats that can store transparency (JPEG cannot; EPS output here is RGB only). */
export function supportsAlpha(format: ImageFormat | 'eps'): boolean {
  return format !== 'jpg' && format !== 'eps';
}

/** Size of one frame as a person sees it: EXIF orientation applied, one page of an animation. */
export function visibleSize(meta: Metadata): { width: number; height: number; pages: number } {
  const pages = meta.pages ?? 1;
  const pageH = meta.pageHeight ?? Math.round(meta.height! / pages);
  return (meta.orientation ?? 1) >= 5 ? { width: pageH, height: meta.width!, pages } : { width: meta.width!, height: pageH, pages };
}

/**
 * Applies `fn` to every frame of an animation separately and joins them again, keeping delays and loop.
 * For operations libvips refuses on multi-page images (rotate) or that would bleed across frames.
 */
export async function mapFrames(file: string, meta: Metadata, fn: (frame: Sharp) => Sharp, signal?: AbortSignal): Promise<Sharp> {
  const sharp = await getSharp();
  const pages = meta.pages ?? 1;
  const frames: Buffer[] = [];
  for (let i = 0; i < pages; i++) {
    if (signal?.aborted) throw new KilnError('CANCELLED', 'The run was cancelled.');
    frames.push(
      await fn(sharp(file, { page: i, pages: 1, limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error' }).ensureAlpha())
        .png({ compressionLevel: 0 })
        .toBuffer(),
    );
  }
  const joined = sharp(frames, { join: { animated: true } });
  return meta.format === 'gif'
    ? joined.gif({ loop: meta.loop ?? 0, ...(meta.delay ? { delay: meta.delay } : {}) })
    : joined.webp({ loop: meta.loop ?? 0, ...(meta.delay ? { delay: meta.delay } : {}) });
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

/**
 * libaom's effort for AVIF and AV1-coded HEIF unless asked otherwise: 3 (libaom's speed 6, avifenc's
 * default). sharp's libaom encodes on one thread, and sharp's default of 4 took 4.4 s for a 720×477 photo
 * and 11.2 s for a 3013×1561 screenshot against 0.9 and 3.7 s at 3, the files -3 % to +5 % in size at a
 * PSNR within 0.6 dB.
 */
const AV1_EFFORT = 3;

/** Applies encoder settings for a format sharp writes natively. */
export function encode(img: Sharp, format: ImageFormat, o: EncodeOptions = {}): Sharp {
  if (o.keepMetadata) img = img.keepMetadata();
  const q = o.quality;
  switch (format) {
    case 'jpg':
      // libjpeg-turbo by default: mozjpeg's trellis search makes a 12 MP encode ~8x slower for ~20% less size,
      // worth it only where size is the point (compress, optimize-for-web pass optimizeSize). The mozjpeg
      // preset turns on optimiseScans, which forces progressive; a baseline JPEG keeps the rest without it.
      if (!o.optimizeSize) return img.jpeg({ quality: q ?? 85, progressive: o.progressive ?? false });
      return o.progressive === false
        ? img.jpeg({ quality: q ?? 85, progressive: false, trellisQuantisation: true, overshootDeringing: true, quantisationTable: 3 })
        : img.jpeg({ quality: q ?? 85, mozjpeg: true });
    case 'png':
      return img.png({
        compressionLevel: o.effort ?? 6,
        progressive: o.progressive ?? false,
        ...(q !== undefined && q < 100 ? { palette: true, quality: q } : {}),
      });
    case 'webp':
      return img.webp({ quality: q ?? 80, lossless: o.lossless ?? false, effort: o.effort ?? 4 });
    case 'avif':
      return img.avif({ quality: q ?? 50, lossless: o.lossless ?? false, effort: o.effort ?? AV1_EFFORT });
    case 'tiff': {
      // sharp writes its own default of 1 pixel/mm (25.4 dpi) unless told: a 300 dpi page printed 12x too large.
      const res = (o.density ?? 72) / 25.4;
      return img.tiff({ quality: q ?? 80, compression: 'lzw', xres: res, yres: res, resolutionUnit: 'inch' });
    }
    case 'gif':
      return img.gif({ effort: o.effort ?? 7 });
    case 'heif':
      // sharp's HEIF writer is AV1-coded HEIF; HEVC-coded HEIC goes through vips (see writeImage).
      return img.heif({ quality: q ?? 50, compression: 'av1', lossless: o.lossless ?? false, effort: o.effort ?? AV1_EFFORT });
    default:
      throw new KilnError('INTERNAL', `encode() cannot write ${format} in process`);
  }
}

/**
 * The encoder quality for `format` when a setting means "quality of a lossy format": none for PNG and
 * GIF. encode() reads a PNG quality below 100 as palette quantisation (256 colours) — what compress asks
 * for — which would band a gradient or undo what a network or filter just did.
 */
export function lossyQuality(format: ImageFormat, quality: number | undefined): number | undefined {
  return format === 'png' || format === 'gif' ? undefined : quality;
}

const headers = new WeakMap<Sharp, Promise<Metadata>>();

/**
 * The input's header as sharp reports it, read once per pipeline: each metadata() call reads the input
 * again (0.3–0.5 ms of CPU and a thread-pool round trip per call on a small image), and a tool that
 * sized its work from the header would otherwise pay twice when writeImage looks at depth and colour.
 */
export function inputMetadata(img: Sharp): Promise<Metadata> {
  let header = headers.get(img);
  if (!header) {
    header = img.metadata();
    headers.set(img, header);
    header.catch(() => headers.delete(img));
  }
  return header;
}

/** Largest input whose result keepDepthAndGrey decodes to see whether it stayed grey. */
const GREY_CHECK_PIXELS = 16_000_000;

/** Formats that store one grey channel (sharp writes sRGB unless told otherwise). */
const GREY_FORMATS = new Set<ImageFormat>(['png', 'tiff', 'jpg']);

/**
 * 16 bits per channel stay 16 bits in PNG and TIFF (not palette PNG): sharp otherwise writes 8 bits, losing
 * the tonal range of a 16-bit scan or render. Pipelines run at 16 bits already; only the output was cut.
 * A greyscale input stays one channel (grey16, or b-w at 8 bits) unless the pipeline coloured it (a tint,
 * a coloured border or watermark): sharp's sRGB output would triple the samples and change the file's kind.
 */
export async function keepDepthAndGrey(img: Sharp, format: ImageFormat, o: EncodeOptions = {}): Promise<Sharp> {
  const palette = format === 'png' && o.quality !== undefined && o.quality < 100;
  if (palette || !GREY_FORMATS.has(format)) return img;
  const meta = await inputMetadata(img);
  const deep = meta.depth === 'ushort' && format !== 'jpg';
  const greyIn = meta.space === 'grey16' || meta.space === 'b-w';
  if (!deep && !greyIn) return img;
  // The check decodes the result at 16 bits × 3: above ~16 MP (96 MB) a big scan keeps sharp's sRGB instead.
  const grey = greyIn && meta.width! * meta.height! <= GREY_CHECK_PIXELS && (await staysGrey(img));
  if (deep) return img.toColourspace(grey ? 'grey16' : 'rgb16');
  return grey ? img.toColourspace('b-w') : img;
}

/** Whether what the pipeline makes of a grey input is still grey (R = G = B in every pixel). */
async function staysGrey(img: Sharp): Promise<boolean> {
  const { data, info } = await img.clone().toColourspace('rgb16').raw({ depth: 'ushort' }).toBuffer({ resolveWithObject: true });
  const px = new Uint16Array(data.buffer, data.byteOffset, data.length / 2);
  for (let i = 0; i < px.length; i += info.channels) if (px[i] !== px[i + 1] || px[i] !== px[i + 2]) return false;
  return true;
}

/**
 * `img` without its alpha channel when no pixel of the result uses it (every one opaque): a tool that
 * composites onto an RGBA canvas (a border, a vignette, a caption) would otherwise turn an opaque photo
 * into a larger RGBA file. Renders the pipeline's alpha band alone (one byte a pixel) to look; a result
 * without alpha reads as opaque, and removeAlpha then changes nothing.
 */
export async function withoutUnusedAlpha(img: Sharp): Promise<Sharp> {
  // sRGB first so grey+alpha has its alpha in band 3 too; ensureAlpha gives a result without one an opaque band.
  const alpha = await img.clone().toColourspace('srgb').ensureAlpha().extractChannel(3).raw().toBuffer();
  for (let i = 0; i < alpha.length; i++) if (alpha[i] !== 255) return img;
  return img.removeAlpha();
}

/**
 * Writes an image in any of IMAGE_FORMATS. HEIC (HEVC) and JXL are encoded by the Debian vips CLI from a
 * lossless intermediate, since sharp's prebuilt libvips has no encoder for them.
 */
export async function writeImage(img: Sharp, outPath: string, format: ImageFormat, o: EncodeOptions = {}): Promise<void> {
  if (o.trimAlpha && format !== 'jpg') img = await withoutUnusedAlpha(img);
  if (format === 'heic' || format === 'jxl') {
    const vips = await requireEngine('vips');
    const tmp = `${outPath}.tmp.png`;
    try {
      await (o.keepMetadata ? img.keepMetadata() : img).png({ compressionLevel: 1 }).toFile(tmp);
      const q = String(o.quality ?? (format === 'heic' ? 50 : 75));
      // Saver options go in the file name: Debian's vips 8.14 loads heifsave/jxlsave as modules, which
      // `vips heifsave …` does not find as actions, while `vips copy` picks the saver by suffix.
      const opts = format === 'heic' ? `compression=hevc,Q=${q}${o.lossless ? ',lossless' : ''}` : `Q=${q}${o.lossless ? ',lossless' : ''}`;
      const part = `${outPath}.partial.${format}`;
      try {
        await exec(vips, ['copy', tmp, `${part}[${opts}]`], { env: vipsEnv() });
        await rename(part, outPath);
      } finally {
        await rm(part, { force: true });
      }
    } finally {
      await rm(tmp, { force: true });
    }
    return;
  }
  if (format === 'tiff' && o.density === undefined) o = { ...o, density: (await inputMetadata(img)).density };
  // Straight to its name: outPath is in the run's own out directory, which runTool empties when the run
  // fails, so nothing half-written outlives it (a file name and a rename would cost a request on the
  // thread pool each time, for nothing).
  try {
    await encode(await keepDepthAndGrey(img, format, o), format, o).toFile(outPath);
  } catch (e) {
    await rm(outPath, { force: true });
    throw e;
  }
}
