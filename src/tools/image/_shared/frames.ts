/**
 * Inputs with several pictures (animated GIF/WebP/APNG, multi-page TIFF) given to a tool that works on
 * one: the tool uses the first and says so in data.warnings, rather than dropping the rest silently.
 */
import type { InputFile, RunContext } from '../../../core/tool.js';
import { readHead } from '../../../core/read-head.js';
import { getSharp, isAnimatedFormat, MAX_INPUT_PIXELS } from '../../../engines/sharp.js';

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

/**
 * num_frames of the acTL chunk, which the APNG format puts before the first IDAT. libvips reads an APNG
 * as its default image only, so sharp's header has no page count for it.
 */
export function apngFrames(head: Buffer): number {
  let at = 8;
  while (at + 12 <= head.length) {
    const len = head.readUInt32BE(at);
    const type = head.toString('latin1', at + 4, at + 8);
    if (type === 'acTL' && at + 12 <= head.length) return Math.max(1, head.readUInt32BE(at + 8));
    if (type === 'IDAT' || type === 'IEND') break;
    at += 12 + len;
  }
  return 1;
}

/** Warns when `file` holds several frames or pages and the tool used only the first. */
export async function warnFirstFrameOnly(ctx: RunContext, file: InputFile, tool: string): Promise<void> {
  const n = await frameCount(file);
  if (n <= 1) return;
  const what = file.type?.ext === 'tiff' ? `${n} pages` : `${n} animation frames`;
  ctx.warn(`${file.name} has ${what}; ${tool} used the first only.`);
}
