/** Chapters of an output whose timeline differs from its input's (sped up, slowed down). */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { MediaInfo } from './probe.js';

/** FFMETADATA escapes '=', ';', '#', '\' and newlines in keys and values with a backslash. */
const ffmetaEscape = (s: string) => s.replace(/[=;#\\\n]/g, (c) => `\\${c}`);

/**
 * The input's chapters with every time passed through `retime`, for an output on another timeline:
 * ffmpeg copies chapters at their old times, so a chapter of a 2x faster audiobook pointed twice as far in
 * (and past the end). Writes an FFMETADATA file in `dir`; `input` goes among the inputs (its index is
 * `inputIndex`), `map` among the output options. Both empty when the input has no chapters.
 */
export async function retimedChapters(
  info: MediaInfo,
  retime: (t: number) => number,
  dir: string,
  inputIndex: number,
): Promise<{ input: string[]; map: string[] }> {
  if (info.chapters.length === 0) return { input: [], map: [] };
  const lines = [';FFMETADATA1'];
  for (const c of info.chapters) {
    lines.push('[CHAPTER]', 'TIMEBASE=1/1000', `START=${Math.round(retime(c.startS) * 1000)}`, `END=${Math.round(retime(c.endS) * 1000)}`);
    for (const [k, v] of Object.entries(c.tags)) lines.push(`${ffmetaEscape(k)}=${ffmetaEscape(v)}`);
  }
  const file = path.join(dir, 'chapters.ffmeta');
  await writeFile(file, `${lines.join('\n')}\n`);
  return { input: ['-f', 'ffmetadata', '-i', file], map: ['-map_chapters', String(inputIndex)] };
}
