/** Chapters of an output whose timeline differs from its input's (sped up, slowed down, reversed). */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { MediaInfo } from './probe.js';

/** FFMETADATA escapes '=', ';', '#', '\' and newlines in keys and values with a backslash. */
const ffmetaEscape = (s: string) => s.replace(/[=;#\\\n]/g, (c) => `\\${c}`);

/**
 * The input's chapters with every time passed through `retime` (t -> duration - t for a reversed output), for an output on another timeline:
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
  // A reversed timeline turns each chapter around (its end comes first) and their order with it.
  const moved = info.chapters
    .map((c) => {
      const [a, b] = [retime(c.startS), retime(c.endS)];
      return { startS: Math.min(a, b), endS: Math.max(a, b), tags: c.tags };
    })
    .sort((x, y) => x.startS - y.startS);
  for (const c of moved) {
    lines.push('[CHAPTER]', 'TIMEBASE=1/1000', `START=${Math.round(c.startS * 1000)}`, `END=${Math.round(c.endS * 1000)}`);
    for (const [k, v] of Object.entries(c.tags)) lines.push(`${ffmetaEscape(k)}=${ffmetaEscape(v)}`);
  }
  const file = path.join(dir, 'chapters.ffmeta');
  await writeFile(file, `${lines.join('\n')}\n`);
  return { input: ['-f', 'ffmetadata', '-i', file], map: ['-map_chapters', String(inputIndex)] };
}
