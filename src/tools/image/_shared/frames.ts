/**
 * Inputs with several pictures (animated GIF/WebP/APNG, multi-page TIFF) given to a tool that works on
 * one: the tool uses the first and runTool says so in data.warnings (ToolDef `frames`), rather than
 * the rest being dropped silently.
 */
import type { InputFile } from '../../../core/tool.js';
import { readHead } from '../../../core/read-head.js';
import { getSharp, isAnimatedFormat, MAX_INPUT_PIXELS } from '../../../engines/sharp.js';
import { refuseOverPixelLimit } from './pixel-limit.js';

/** Kinds whose files can hold several frames or pages that sharp reports. */
const MULTI_FRAME = new Set(['gif', 'webp', 'tiff']);

/** Frames (GIF, WebP, APNG) or pages (TIFF) in `file`; 1 for anything else or when the header does not say. */
export async function frameCount(file: InputFile): Promise<number> {
  const ext = file.type?.ext;
  if (ext === 'apng') return apngFrames(file.bytes ?? (await readHead(file.path, 1 << 20)));
  if (!ext || !MULTI_FRAME.has(ext)) return 1;
  const sharp = await getSharp();
  const meta = await sharp(file.bytes ?? file.path, { limitInputPixels: MAX_INPUT_PIXELS })
    .metadata()
    .catch(() => undefined);
  return meta?.pages ?? 1;
}

/**
 * Whether sharp can carry every frame or page of `file` through a geometry operation and write them back
 * in the same format: GIF and WebP animations, and a multi-page TIFF whose pages share one size (libvips
 * loads those as one strip; pages of different sizes it refuses, and the tool then uses the first).
 */
export async function keepsFrames(file: InputFile): Promise<boolean> {
  const ext = file.type?.ext;
  if (isAnimatedFormat(ext)) return true;
  if (ext !== 'tiff') return false;
  const sharp = await getSharp();
  const meta = await sharp(file.bytes ?? file.path, { animated: true, limitInputPixels: MAX_INPUT_PIXELS })
    .metadata()
    .catch(() => undefined);
  // An EXIF-style orientation would turn the whole strip, not each page.
  return (meta?.pages ?? 1) > 1 && (meta?.orientation ?? 1) <= 1;
}

/** ToolDef `frames` of the tools that keep every frame or page where keepsFrames() says they can. */
export async function dropsFrames(file: InputFile): Promise<boolean> {
  return !(await keepsFrames(file));
}

/** Whether a conversion to `format` carries an animation (GIF, WebP, APNG through ffmpeg) over: only GIF and WebP write one. */
export function keepsAnimation(ext: string | undefined, format: string): boolean {
  return (isAnimatedFormat(ext) || ext === 'apng') && (format === 'gif' || format === 'webp');
}

/** An APNG's animation as its chunks state it (libvips reads only the default image, so sharp cannot). */
export interface ApngTiming {
  frames: number;
  /** num_plays: 0 = for ever. */
  loop: number;
  /** Milliseconds per frame, from each fcTL's delay_num/delay_den (a den of 0 means 1/100 s). */
  delays: number[];
}

/** The acTL and fcTL chunks of an APNG (or the head of one); undefined when there is no acTL. */
export function apngTiming(png: Buffer): ApngTiming | undefined {
  let frames = 0;
  let loop = 0;
  const delays: number[] = [];
  for (let at = 8; at + 12 <= png.length; ) {
    const len = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    const d = at + 8;
    if (type === 'acTL' && len >= 8 && d + 8 <= png.length) {
      frames = png.readUInt32BE(d);
      loop = png.readUInt32BE(d + 4);
    } else if (type === 'fcTL' && len >= 26 && d + 26 <= png.length)
      delays.push(Math.round((png.readUInt16BE(d + 20) * 1000) / (png.readUInt16BE(d + 22) || 100)));
    else if (type === 'IEND') break;
    at += 12 + len;
  }
  return frames ? { frames, loop, delays } : undefined;
}

/** num_frames of the acTL chunk, which the APNG format puts before the first IDAT. */
export function apngFrames(head: Buffer): number {
  return Math.max(1, apngTiming(head)?.frames ?? 1);
}

/**
 * Checks an APNG's canvas (IHDR) and frame count (acTL) from its head before anything decodes it: ffmpeg,
 * which turns APNG into WebP for sharp, has no pixel limit of its own, and a 140 KB APNG declaring
 * 12000 × 12000 held it 90 s and 3 GB before sharp refused the result; one of 1500 × 1500 × 6000
 * one-pixel frames (390 KB) was converted for 90 s.
 */
export function checkApngPixels(head: Buffer): void {
  if (head.length < 24 || head.toString('latin1', 12, 16) !== 'IHDR') return;
  // Every frame decodes at the full canvas size, however little of it the file stores.
  refuseOverPixelLimit({
    what: 'decoded animation',
    width: head.readUInt32BE(16),
    height: head.readUInt32BE(20),
    frames: apngFrames(head),
  });
}

/** The warning runTool gives when a tool used the first of the `n` frames or pages of `file` only (ToolDef `frames`). */
export function firstFrameOnly(file: InputFile, n: number, tool: string): string {
  const what = file.type?.ext === 'tiff' ? `${n} pages` : `${n} animation frames`;
  return `${file.name} has ${what}; ${tool} used the first only.`;
}
