/**
 * LibreOffice's import options for text inputs (CSV, plain text), read from the file. A fixed "comma,
 * UTF-8" put every field of a semicolon- or tab-separated file (what Excel writes in most of Europe, and
 * as "Unicode text") into one column, and LibreOffice read every Latin-1 letter of a CSV or .txt as
 * U+FFFD. The encoding comes from the whole file (core/text-encoding.ts), the separator from its first
 * lines.
 */
import { readHead } from '../../core/read-head.js';
import { decodeText, detectTextEncoding, type TextEncodingName } from '../../core/text-encoding.js';

/** LibreOffice's rtl_TextEncoding numbers (include/rtl/textenc.h); UNICODE reads UTF-16 of either order by its BOM. */
// The East Asian ones are the Windows code pages (MS_932…MS_950), which is what the WHATWG decoders of
// those names read too.
const LO_CHARSET: Record<TextEncodingName, number> = {
  'windows-1252': 1,
  'utf-8': 76,
  'utf-16le': 65535,
  'utf-16be': 65535,
  shift_jis: 60,
  gbk: 61,
  'euc-kr': 62,
  big5: 63,
};
/** The same encodings by the names the plain-text filter's options take (rtl_getTextEncodingFromMimeCharset spelling). */
const LO_CHARSET_NAME: Record<TextEncodingName, string> = {
  'windows-1252': 'MS_1252',
  'utf-8': 'UTF8',
  'utf-16le': 'UNICODE',
  'utf-16be': 'UNICODE',
  shift_jis: 'MS_932',
  gbk: 'MS_936',
  'euc-kr': 'MS_949',
  big5: 'MS_950',
};

/** Candidate separators, in the order a tie is broken. */
const SEPARATORS = [',', ';', '\t', '|'];

/** How many records the separator is judged on. */
const SAMPLE_LINES = 50;

/** Counts of each candidate separator outside double-quoted fields, per record of `text`; `cut` drops the last. */
function countsPerRecord(text: string, cut: boolean): number[][] {
  const records: number[][] = [];
  let counts = SEPARATORS.map(() => 0);
  let quoted = false;
  let empty = true;
  for (const ch of text) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && (ch === '\n' || ch === '\r')) {
      if (!empty) records.push(counts);
      counts = SEPARATORS.map(() => 0);
      empty = true;
      if (records.length >= SAMPLE_LINES) return records;
      continue;
    } else if (!quoted) {
      const k = SEPARATORS.indexOf(ch);
      if (k >= 0) counts[k]!++;
    }
    empty = false;
  }
  // The last record of a sample cut mid-file is partial: judged only when it is the only one.
  if (!empty && (!cut || records.length === 0)) records.push(counts);
  return records;
}

/**
 * The separator that splits every sampled record into the same number of fields (the most fields
 * wins), else the one found on most records; comma when none is found (a one-column file).
 */
export function sniffSeparator(text: string, cut = false): string {
  const records = countsPerRecord(text, cut);
  let best = 0;
  let bestScore = -1;
  SEPARATORS.forEach((_, k) => {
    const n = records.map((r) => r[k]!);
    const present = n.filter((c) => c > 0).length;
    if (present === 0) return;
    const consistent = n.every((c) => c === n[0]);
    // Consistency first, then how many records hold it, then how many fields it makes.
    const score = (consistent ? 1e9 : 0) + present * 1e4 + Math.min(n[0]!, 9999);
    if (score > bestScore) {
      bestScore = score;
      best = k;
    }
  });
  return SEPARATORS[best]!;
}

/** How a CSV file is read: its encoding, its separator and the `--infilter` value saying both. */
export async function csvImport(
  file: string,
): Promise<{ encoding: TextEncodingName; separator: string; filter: string; hintLine: boolean }> {
  const encoding = await detectTextEncoding(file);
  const HEAD = 64 * 1024;
  const head = await readHead(file, HEAD);
  const text = decodeText(head, encoding);
  // Excel's separator hint: a first line `sep=;` names the separator and is no data (LibreOffice made
  // it a row of its own).
  const hint = /^\uFEFF?sep=([^\r\n])\r?\n/i.exec(text);
  const separator = hint ? hint[1]! : sniffSeparator(text, head.length === HEAD);
  // `CSV:<separator>,<quote>,<charset>,<first line>`
  const filter = `CSV:${separator.codePointAt(0)},34,${LO_CHARSET[encoding]},${hint ? 2 : 1}`;
  return { encoding, separator, filter, hintLine: !!hint };
}

/** The `--infilter` value for a plain-text file opened in Writer. */
export async function textInFilter(file: string): Promise<string> {
  return `Text (encoded):${LO_CHARSET_NAME[await detectTextEncoding(file)]}`;
}
