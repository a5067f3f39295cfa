/**
 * Opening any accepted image: openImage (sharp, with vips/Ghostscript for HEIC, JXL and EPS) plus
 * Photoshop, BMP and ICO files, which libvips in sharp cannot read: ImageMagick decodes them first.
 * SVG is sanitized first (svg-input.ts), so no tool renders a reference to a local file or the network.
 * An input that another engine than sharp decodes is checked against KILN_MAX_PIXELS from its header first
 * (declared-size.ts); sharp checks the rest itself.
 * Tools that declare `input.inMemory` read their input only through here.
 */
import path from 'node:path';
import type { Sharp, SharpOptions } from 'sharp';
import { KilnError } from '../../../core/errors.js';
import { exec } from '../../../core/process.js';
import type { InputFile } from '../../../core/tool.js';
import { requireEngine } from '../../../engines/registry.js';
import { decodesInProcess, openImage } from '../../../engines/sharp.js';
import { onDisk } from '../../../core/input-bytes.js';
import { readHead } from '../../../core/read-head.js';
import { refuseOverDeclaredPixels } from './declared-size.js';
import { checkApngPixels } from './frames.js';
import { largestIcoEntry } from './ico.js';

/**
 * Formats sharp's libvips has no loader for, read by ImageMagick, and what ImageMagick writes for libvips.
 * PSD as TIFF: that holds the file's own colour space, ICC profile and depth, so a CMYK Photoshop file is
 * converted through its profile as a CMYK JPEG is (PNG32 was ImageMagick's naive CMYK → RGB, profile
 * dropped: oversaturated colours) and a 16-bit or grey one stays so. BMP and ICO hold 8-bit RGB(A) at most
 * (often 1-4 bit palettes, which ImageMagick would write as TIFFs sharp cannot read): PNG32.
 */
const MAGICK_READS: Readonly<Record<string, (out: string) => string[]>> = {
  psd: (out) => ['-compress', 'lzw', `tiff:${out}`],
  bmp: (out) => [`png32:${out}`],
  ico: (out) => [`png32:${out}`],
};

export async function openInput(
  file: InputFile,
  workDir: string,
  signal?: AbortSignal,
  opts: { animated?: boolean } & SharpOptions = {},
): Promise<Sharp> {
  const ext = file.type?.ext;
  // librsvg would load the files and URLs an SVG names: only the sanitized document is rendered.
  if (ext === 'svg') {
    // Loaded for an SVG only: it brings node:zlib (for .svgz), 3.5–5 ms of each image tool's start on a slow machine.
    const { safeSvg } = await import('./svg-input.js');
    const svg = (await safeSvg(file)).svg;
    // Its size read from the sanitized document: runTool's wording of a refusal reads no raw SVG.
    await refuseOverDeclaredPixels(file, opts, svg, { inProcessToo: true });
    return openImage(svg, { workDir, signal, ...opts });
  }
  // Before any engine: ImageMagick, the vips CLI and ffmpeg have no pixel limit of ours.
  await refuseOverDeclaredPixels(file, opts);
  const magickOut = ext ? MAGICK_READS[ext] : undefined;
  if (ext && magickOut) {
    const magick = await requireEngine('imagemagick');
    const src = await onDisk(file);
    const decoded = path.join(workDir, `${ext}-${Date.now()}-${Math.random().toString(36).slice(2)}`);
    // PSD: [0] is the flattened composite that Photoshop stores next to the layers. ICO: the largest icon.
    const frame = ext === 'ico' ? (largestIcoEntry(await readHead(src, 6 + 16 * 256)) ?? 0) : 0;
    await exec(magick, [`${ext}:${src}[${frame}]`, ...magickOut(decoded)], {
      failCode: 'UNSUPPORTED_INPUT',
      signal,
      timeoutMs: 120_000,
    }).catch((e: unknown) => {
      // exec words it "convert failed (exit 1): …", which read as kiln's own convert tool failing.
      if (e instanceof KilnError && e.code === 'UNSUPPORTED_INPUT')
        throw new KilnError('UNSUPPORTED_INPUT', `ImageMagick could not read the ${ext.toUpperCase()} file: ${e.message}`, {
          details: e.details,
          cause: e,
        });
      throw e;
    });
    return openImage(decoded, { workDir, signal, ...opts });
  }
  // libvips reads an APNG as its still default image: its frames come through ffmpeg.
  if (opts.animated && ext === 'apng') return openImage(await apngAsWebp(file, workDir, signal), { workDir, signal, ...opts });
  // An upload held in memory goes to sharp as it is; other engines read it from disk.
  const src = file.bytes && decodesInProcess(ext, workDir) ? file.bytes : await onDisk(file);
  return openImage(src, { ext, workDir, signal, ...opts });
}

/**
 * An APNG as a lossless animated WebP (every frame, its delay and the loop count kept) that sharp reads
 * with `animated`: libvips itself decodes only an APNG's default image.
 */
export async function apngAsWebp(file: InputFile, workDir: string, signal?: AbortSignal): Promise<string> {
  checkApngPixels(file.bytes ?? (await readHead(file.path, 1 << 20)));
  const ffmpeg = await requireEngine('ffmpeg');
  const webp = path.join(workDir, `apng-${Date.now()}-${Math.random().toString(36).slice(2)}.webp`);
  await exec(ffmpeg, ['-v', 'error', '-y', '-i', await onDisk(file), '-c:v', 'libwebp_anim', '-lossless', '1', '-loop', '0', webp], {
    signal,
    failCode: 'UNSUPPORTED_INPUT',
  });
  return webp;
}
