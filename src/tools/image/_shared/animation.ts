/**
 * Animated images as a list of RGBA frames with their delays, and back. sharp decodes GIF and WebP
 * animations as one tall strip of pages; APNG (which libvips reads as a still) is first turned into a
 * lossless animated WebP by ffmpeg, which keeps every frame's timing.
 */
import type { Sharp } from 'sharp';
import type { InputFile } from '../../../core/tool.js';
import { getSharp, MAX_INPUT_PIXELS } from '../../../engines/sharp.js';
import { checkAbort } from './cancel.js';
import { apngAsWebp } from './decode.js';
import { checkAnimationPixels } from './frames.js';

export interface Animation {
  width: number;
  height: number;
  /** RGBA, width × height × 4 bytes each. */
  frames: Buffer[];
  /** Milliseconds per frame. */
  delays: number[];
  loop: number;
}

/** GIF frames shorter than this are shown at 100 ms by most browsers, so faster is slower. */
export const MIN_GIF_DELAY = 20;

export async function decodeAnimation(file: InputFile, workDir: string, signal?: AbortSignal): Promise<Animation> {
  const sharp = await getSharp();
  const apng = file.type?.ext === 'apng' || file.type?.mime === 'image/apng';
  const src = apng ? await apngAsWebp(file, workDir, signal) : file.path;
  const meta = await sharp(src, { animated: true, limitInputPixels: MAX_INPUT_PIXELS }).metadata();
  const pages = meta.pages ?? 1;
  const height = meta.pageHeight ?? meta.height!;
  const width = meta.width!;
  checkAnimationPixels(width, height, pages);
  const { data } = await sharp(src, { animated: true, limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error' })
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const size = width * height * 4;
  const frames = Array.from({ length: pages }, (_, i) => Buffer.from(data.subarray(i * size, (i + 1) * size)));
  const delays = Array.from({ length: pages }, (_, i) => (Array.isArray(meta.delay) ? meta.delay[i] : undefined) ?? 100);
  return { width, height, frames, delays, loop: meta.loop ?? 0 };
}

/** One sharp image holding every frame, ready for .gif()/.webp(). */
export async function joinAnimation(a: Animation): Promise<Sharp> {
  const sharp = await getSharp();
  const strip = Buffer.concat(a.frames);
  return sharp(strip, { raw: { width: a.width, height: a.height * a.frames.length, channels: 4, pageHeight: a.height } as never });
}

/** A frame as a standalone sharp image. */
export async function frameImage(a: Animation, i: number): Promise<Sharp> {
  const sharp = await getSharp();
  return sharp(a.frames[i]!, { raw: { width: a.width, height: a.height, channels: 4 } });
}

/** Applies fn to every frame (which may change the frame size; all frames must end the same size). */
export async function mapFrames(
  a: Animation,
  fn: (img: Sharp, i: number) => Sharp | Promise<Sharp>,
  signal?: AbortSignal,
): Promise<Animation> {
  const frames: Buffer[] = [];
  let width = a.width;
  let height = a.height;
  for (let i = 0; i < a.frames.length; i++) {
    checkAbort(signal);
    const { data, info } = await (await fn(await frameImage(a, i), i)).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    width = info.width;
    height = info.height;
    frames.push(data);
  }
  return { ...a, width, height, frames };
}
