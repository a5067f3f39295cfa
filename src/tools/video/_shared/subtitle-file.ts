/**
 * A subtitle file made readable for ffmpeg before burn-subtitles or embed-subtitles use it. Three kinds
 * of files that players show were refused or silently lost:
 * - a WebVTT file with a STYLE or REGION block: ffmpeg's WebVTT demuxer then reads no cue at all, so the
 *   burned video had no subtitles and the embedded track was empty, both with exit 0;
 * - an SRT or WebVTT cue that ends before it starts (a hand-edited or shifted file): the MP4 muxer fails
 *   on its negative duration ("Application provided duration … is invalid", an INTERNAL error);
 * - a file in a legacy 8-bit encoding (Windows-1252 SRTs are common): ffmpeg refuses it as invalid UTF-8.
 * The prepared copy is UTF-8 without those blocks and cues; each change is named in a warning.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { KilnError } from '../../../core/errors.js';
import { readText, type TextEncodingName } from '../../../core/text-encoding.js';
import type { InputFile } from '../../../core/tool.js';

const TIME = String.raw`(?:(\d+):)?(\d{1,2}):(\d{2})[,.](\d{1,3})`;
const TIMING = new RegExp(`^\\s*${TIME}\\s*-->\\s*${TIME}`);

function seconds(h: string | undefined, m: string, s: string, frac: string): number {
  return Number(h ?? 0) * 3600 + Number(m) * 60 + Number(s) + Number(frac.padEnd(3, '0')) / 1000;
}

/** What a legacy code page is called in the warning that it was read in it. */
const LEGACY_NAMES: Partial<Record<TextEncodingName, string>> = {
  'windows-1252': 'Windows-1252 (Western European)',
  shift_jis: 'Shift_JIS (Japanese)',
  'euc-kr': 'CP949 (Korean)',
  gbk: 'GBK (Simplified Chinese)',
  big5: 'Big5 (Traditional Chinese)',
};

/**
 * The text of a subtitle file: UTF-8 or UTF-16 (a BOM dropped), or the legacy code page its bytes fit
 * (core/text-encoding.ts), named in a warning since that is a guess.
 */
async function readSubtitleText(file: string, warn: (m: string) => void, name: string): Promise<string> {
  const { text, encoding } = await readText(file, name);
  const legacy = LEGACY_NAMES[encoding];
  if (legacy) warn(`${name} is not UTF-8: read as ${legacy}.`);
  return text;
}

/** SRT and WebVTT: cues that end before they start left out; WebVTT STYLE and REGION blocks removed. */
function cleanCues(text: string, ext: string, warn: (m: string) => void, name: string): string {
  const blocks = text.replace(/\r\n?/g, '\n').split(/\n[ \t]*\n/);
  let cues = 0;
  const kept = blocks.filter((block) => {
    const lines = block.split('\n').filter((l) => l.trim() !== '');
    const timing = lines.map((l) => TIMING.exec(l)).find((m) => m);
    if (!timing) {
      // Styling blocks of the WebVTT header: libass and the muxers ignore them, ffmpeg's demuxer chokes on them.
      const first = lines[0]?.trim() ?? '';
      if (ext === 'vtt' && /^(STYLE|REGION)\b/.test(first)) {
        warn(`${name}: the WebVTT ${first.split(/\s/)[0]} block was left out (ffmpeg reads no cue after it).`);
        return false;
      }
      return true;
    }
    const [, h1, m1, s1, f1, h2, m2, s2, f2] = timing;
    const start = seconds(h1, m1!, s1!, f1!);
    const end = seconds(h2, m2!, s2!, f2!);
    if (end < start) {
      warn(`${name}: the cue at ${timing[0].trim()} ends before it starts and was left out.`);
      return false;
    }
    cues++;
    return true;
  });
  if (cues === 0) {
    throw new KilnError('UNSUPPORTED_INPUT', `${name} holds no usable subtitle cue (none with a valid "start --> end" time).`, {
      reason: 'no-subtitle-cues',
    });
  }
  return kept.join('\n\n');
}

/**
 * Writes the prepared copy of `subs` into `dir` as `subs.<ext>` (a fixed name: file names inside a filter
 * graph would need two levels of escaping) and returns its path.
 */
export async function prepareSubtitles(subs: InputFile, dir: string, warn: (m: string) => void): Promise<string> {
  const ext = subs.type?.ext ?? 'srt';
  let text = await readSubtitleText(subs.path, warn, subs.name);
  if (ext === 'srt' || ext === 'vtt') text = cleanCues(text, ext, warn, subs.name);
  const out = path.join(dir, `subs.${ext}`);
  await writeFile(out, text.endsWith('\n') ? text : `${text}\n`);
  return out;
}
