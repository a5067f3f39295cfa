/**
 * Which East Asian Windows code page a text that is not UTF-8 was written in, if any. Excel and Notepad
 * in a Japanese, Chinese or Korean Windows save CSV and text in the system code page (CP932 Shift_JIS,
 * CP936 GBK, CP949 Korean, CP950 Big5), and reading those as Windows-1252 turned every name and city of
 * a Japanese CSV into "ŽR“c‘¾˜Y".
 *
 * The four share their byte ranges, and Latin text in Windows-1252 often decodes without error in them
 * too, so decoding alone decides nothing. Each code page puts its frequent characters in known rows (the
 * standards behind them are ordered by use): kana and JIS level-1 kanji for Shift_JIS, GB2312 level-1
 * hanzi for GBK, KS X 1001 Hangul for CP949, Big5's "frequently used" block. A sample is read as each
 * code page; it is taken for the one where nearly all of its multi-byte characters land in those rows.
 * Accented Latin letters (one high byte between ASCII ones) never do.
 */

export type CjkEncoding = 'shift_jis' | 'euc-kr' | 'gbk' | 'big5';

/** One character of the code page starting at `i`: its length in bytes and whether it is a frequent one. */
type Step = (b: Uint8Array, i: number) => { len: number; common: boolean };

const between = (x: number, lo: number, hi: number) => x >= lo && x <= hi;

const STEPS: Record<CjkEncoding, Step> = {
  // Lead 0x81–0x83: punctuation, full-width letters, hiragana, katakana; 0x88–0x98: JIS level-1 kanji.
  // A single 0xA1–0xDF is half-width katakana, which modern text hardly uses (and Latin-1 letters hit).
  shift_jis: (b, i) => {
    const lead = b[i]!;
    if (between(lead, 0xa1, 0xdf)) return { len: 1, common: false };
    if (!between(lead, 0x81, 0x9f) && !between(lead, 0xe0, 0xfc)) return { len: 1, common: false };
    return { len: 2, common: between(lead, 0x81, 0x83) || between(lead, 0x88, 0x98) };
  },
  // KS X 1001 row 4 (Hangul letters) and rows 16–40 (the 2350 Hangul syllables), second byte 0xA1–0xFE.
  'euc-kr': (b, i) => {
    const lead = b[i]!;
    if (!between(lead, 0x81, 0xfe)) return { len: 1, common: false };
    const trail = b[i + 1] ?? 0;
    return { len: 2, common: trail >= 0xa1 && (lead === 0xa4 || between(lead, 0xb0, 0xc8)) };
  },
  // GB2312 rows 1–3 (punctuation, full-width forms) and 16–55 (level-1 hanzi), second byte 0xA1–0xFE;
  // GB18030's four-byte sequences (second byte a digit) are never frequent.
  gbk: (b, i) => {
    const lead = b[i]!;
    if (!between(lead, 0x81, 0xfe)) return { len: 1, common: false };
    const trail = b[i + 1] ?? 0;
    if (between(trail, 0x30, 0x39)) return { len: 4, common: false };
    return { len: 2, common: trail >= 0xa1 && (between(lead, 0xa1, 0xa3) || between(lead, 0xb0, 0xd7)) };
  },
  // Big5 0xA140–0xA3BF (punctuation, symbols) and 0xA440–0xC67E (the frequently used hanzi).
  big5: (b, i) => {
    const lead = b[i]!;
    if (!between(lead, 0x81, 0xfe)) return { len: 1, common: false };
    const trail = b[i + 1] ?? 0;
    return { len: 2, common: between(lead, 0xa1, 0xc5) || (lead === 0xc6 && trail <= 0x7e) };
  },
};

/** Tried in this order; on a tie the first wins (Hangul-only text is as valid in GBK as in CP949). */
const CANDIDATES: CjkEncoding[] = ['shift_jis', 'euc-kr', 'gbk', 'big5'];

/** Share of a sample's non-ASCII characters that must be frequent ones, and how many at least. */
const MIN_SHARE = 0.8;
const MIN_COMMON = 2;

/** Share of the non-ASCII characters of `sample` that are frequent in `enc`; -1 when it is not valid there. */
function share(sample: Uint8Array, enc: CjkEncoding): { share: number; common: number } {
  try {
    // stream: a sample cut inside a character is not an error.
    new TextDecoder(enc, { fatal: true }).decode(sample, { stream: true });
  } catch {
    return { share: -1, common: 0 };
  }
  let total = 0;
  let common = 0;
  for (let i = 0; i < sample.length; ) {
    if (sample[i]! < 0x80) {
      i++;
      continue;
    }
    const step = STEPS[enc](sample, i);
    total++;
    if (step.common) common++;
    i += step.len;
  }
  return { share: total ? common / total : 0, common };
}

/** The East Asian code page `sample` (bytes that are not valid UTF-8) is written in, or undefined. */
export function detectCjkEncoding(sample: Uint8Array): CjkEncoding | undefined {
  let best: CjkEncoding | undefined;
  let bestShare = -1;
  for (const enc of CANDIDATES) {
    const s = share(sample, enc);
    // Strictly greater: on a tie the earlier candidate stays.
    if (s.common >= MIN_COMMON && s.share >= MIN_SHARE && s.share > bestShare) {
      best = enc;
      bestShare = s.share;
    }
  }
  return best;
}
