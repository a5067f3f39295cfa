import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Sharp } from 'sharp';
import { z } from 'zod';
import { defineTool, type RunContext } from '../../../core/tool.js';
import { encode, keepDepthAndGrey, sameFormatAs, visibleSize, writeImage, type ImageFormat } from '../../../engines/sharp.js';
import { outputFile } from '../../_shared/output.js';
import { openInput } from '../_shared/decode.js';
import { checkAbort } from '../_shared/cancel.js';
import { dropsFrames, keepsFrames } from '../_shared/frames.js';

// PNG/GIF have no quality knob: size falls with the palette. Best first.
const PALETTE_STEPS = [256, 128, 64, 32, 16, 8, 4, 2];
const MAX_DOWNSCALES = 12;

interface Attempt {
  buf: Buffer;
  quality: number;
  colours?: number;
  scale: number;
}

export default defineTool({
  id: 'compress',
  section: 'image',
  group: 'essentials',
  summary: 'Shrink an image file by quality level or to a target size, keeping its format.',
  description:
    'mode quality re-encodes at the given quality (PNG and GIF: palette quantization whose colour count follows the quality). ' +
    'mode targetSize searches for the best quality whose file is at most targetSizeKb (binary search on quality for JPEG/WebP/AVIF/HEIF/TIFF, ' +
    'fewer palette colours for PNG/GIF); when even the lowest setting is too big the image is downscaled step by step. ' +
    'If the target cannot be met the smallest result is returned with targetMet false. data reports the size and quality used.',
  input: { kind: 'file', accept: ['image/*'], inMemory: true },
  frames: dropsFrames,
  settings: z.object({
    mode: z.enum(['quality', 'targetSize']).default('quality').describe('Compress by quality level or search for a target size.'),
    quality: z.int().min(1).max(100).default(80).describe("Quality level used in mode 'quality'."),
    targetSizeKb: z.number().gt(0).optional().describe("Target size in KB, used in mode 'targetSize'."),
  }),
  check: (s) => {
    if (s.mode === 'targetSize' && s.targetSizeKb === undefined) return 'mode targetSize needs targetSizeKb.';
  },
  implies: { targetSizeKb: { mode: 'targetSize' } },
  output: 'image in the input format',
  examples: ['photo.jpg --quality 60 -o small.jpg', 'photo.jpg --target-size-kb 200 -o small.jpg'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const ext = input.type?.ext;
    const format = sameFormatAs(ext);
    // Animated GIF/WebP and a multi-page TIFF of one page size keep every frame or page.
    const animated = await keepsFrames(input);
    const base = await openInput(input, ctx.workDir, ctx.signal, { animated });
    const meta = await base.metadata();
    if ((meta.orientation ?? 1) > 1) base.autoOrient();
    const { width: W, height: H } = visibleSize(meta);
    const enc = (scale: number, quality: number, colours?: number) => encodeToBuffer(ctx, base, format, scale, W, quality, colours);
    const palette = format === 'png' || format === 'gif';

    let best: Attempt;
    let targetMet: boolean | undefined;
    if (s.mode === 'quality') {
      // PNG at quality 100 stays lossless (best zlib effort); below that the palette shrinks with quality.
      const colours = palette && !(format === 'png' && s.quality === 100) ? coloursFor(s.quality) : undefined;
      best = { buf: await enc(1, s.quality, colours), quality: s.quality, colours, scale: 1 };
    } else {
      const target = Math.floor(s.targetSizeKb! * 1024);
      let smallest: Attempt | undefined;
      let found: Attempt | undefined;
      let scale = 1;
      for (let step = 0; step <= MAX_DOWNSCALES && !found; step++) {
        checkAbort(ctx.signal);
        ctx.progress(10 + step * 7, step ? `downscale ${Math.round(scale * 100)}%` : 'searching');
        found = palette ? await searchPalette(enc, scale, target, format === 'png') : await searchQuality(enc, scale, target);
        const low =
          found ??
          (palette ? { buf: await enc(scale, 1, 2), quality: 1, colours: 2, scale } : { buf: await enc(scale, 1), quality: 1, scale });
        if (!smallest || low.buf.length < smallest.buf.length) smallest = low;
        if (Math.min(W, H) * scale * 0.8 < 8) break;
        scale *= 0.8;
      }
      targetMet = !!found;
      best = found ?? smallest!;
    }
    const out = ctx.out(format);
    await writeFile(out + '.partial', best.buf);
    await rename(out + '.partial', out);
    const size = best.buf.length;
    return {
      outputs: [outputFile(out)],
      data: {
        mode: s.mode,
        format,
        originalSize: input.size,
        size,
        sizeKb: Math.round((size / 1024) * 10) / 10,
        quality: best.quality,
        ...(best.colours !== undefined ? { colours: best.colours } : {}),
        width: Math.max(1, Math.round(W * best.scale)),
        height: Math.max(1, Math.round(H * best.scale)),
        scale: Math.round(best.scale * 1000) / 1000,
        ...(s.mode === 'targetSize'
          ? {
              targetSizeKb: s.targetSizeKb,
              targetMet,
              ...(targetMet
                ? {}
                : { message: `Could not reach ${s.targetSizeKb} KB; returned the smallest result (${Math.round(size / 1024)} KB).` }),
            }
          : {}),
      },
    };
  },
});

function coloursFor(quality: number): number {
  return Math.max(2, Math.min(256, Math.round((256 * quality) / 100)));
}

/** Highest quality (1-100) whose encoding fits, or undefined when quality 1 does not. */
async function searchQuality(
  enc: (scale: number, q: number) => Promise<Buffer>,
  scale: number,
  target: number,
): Promise<Attempt | undefined> {
  let lo = 1;
  let hi = 100;
  let fit: Attempt | undefined;
  const first = await enc(scale, 1);
  if (first.length > target) return undefined;
  fit = { buf: first, quality: 1, scale };
  lo = 2;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const buf = await enc(scale, mid);
    if (buf.length <= target) {
      fit = { buf, quality: mid, scale };
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return fit;
}

/**
 * Most colours (then highest quantizer quality) whose PNG/GIF fits. The settings are ordered best to
 * worst and sizes fall along that order, so the smallest one is tried first (to give up early) and the
 * rest is a binary search: about five encodes instead of sixteen.
 */
async function searchPalette(
  enc: (scale: number, q: number, colours?: number) => Promise<Buffer>,
  scale: number,
  target: number,
  lossless: boolean,
): Promise<Attempt | undefined> {
  const steps = PALETTE_STEPS.flatMap((colours) => [100, 40].map((quality) => ({ colours, quality })));
  const at = async (i: number): Promise<Attempt> => ({ buf: await enc(scale, steps[i]!.quality, steps[i]!.colours), ...steps[i]!, scale });
  let fit = await at(steps.length - 1);
  if (fit.buf.length > target) return undefined;
  if (lossless) {
    // Full-colour PNG when it fits: nothing is lost at all.
    const full = await enc(scale, 100);
    if (full.length <= target) return { buf: full, quality: 100, scale };
  }
  let lo = 0;
  let hi = steps.length - 2;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const a = await at(mid);
    if (a.buf.length <= target) {
      fit = a;
      hi = mid - 1;
    } else lo = mid + 1;
  }
  return fit;
}

async function encodeToBuffer(
  ctx: RunContext,
  base: Sharp,
  format: ImageFormat,
  scale: number,
  W: number,
  quality: number,
  colours?: number,
): Promise<Buffer> {
  checkAbort(ctx.signal);
  let img = base.clone();
  if (scale < 1) img = img.resize({ width: Math.max(1, Math.round(W * scale)) });
  switch (format) {
    case 'png':
      // Lossless: no `effort`, which in sharp's png() turns on palette quantisation and made quality 100
      // (and targetSize's full-colour try) a 256-colour image. A 16-bit or grey input keeps its depth and kind.
      if (colours === undefined)
        return (await keepDepthAndGrey(img, 'png')).png({ compressionLevel: 9, adaptiveFiltering: true }).toBuffer();
      return img.png({ palette: true, colours: colours ?? 256, quality, compressionLevel: 9, effort: 4, dither: 1 }).toBuffer();
    case 'gif':
      return img.gif({ colours: colours ?? 256, effort: 4, dither: quality >= 60 ? 1 : 0.5 }).toBuffer();
    case 'tiff':
      return img.tiff({ compression: 'jpeg', quality }).toBuffer();
    case 'heic':
    case 'jxl': {
      // Encoded by the vips CLI (writeImage): sharp has no HEVC or JPEG XL encoder.
      const tmp = path.join(ctx.workDir, `compress-q${quality}-${Math.round(scale * 1000)}.${format}`);
      try {
        await writeImage(img, tmp, format, { quality });
        return await readFile(tmp);
      } finally {
        await rm(tmp, { force: true });
      }
    }
    default:
      // compress is about size: the size-optimising encoder throughout, so the search and quality mode agree.
      // AVIF keeps encode()'s effort 3: the search encodes ~8 times, and at 4 a 3 MP AVIF took 141 s.
      return encode(img, format, { quality, optimizeSize: true }).toBuffer();
  }
}
