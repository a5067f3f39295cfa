/**
 * Tesseract OCR (Apache-2.0, Debian's tesseract-ocr 5 with its language packs), run as a program:
 * words with boxes and confidences from its TSV output, or the text of one line.
 */
import { exec } from '../core/process.js';
import { requireEngine } from './registry.js';

const TIMEOUT_MS = 600_000;

export interface TesseractWord {
  block: number;
  par: number;
  line: number;
  text: string;
  /** 0-100 as tesseract reports it. */
  conf: number;
  left: number;
  top: number;
  width: number;
  height: number;
}

/** One thread per process: kiln runs several recognitions side by side instead. */
const ENV = { ...process.env, OMP_THREAD_LIMIT: '1' };

/**
 * Words of an image with their block/paragraph/line numbers (reading order as tesseract segments the
 * page). `psm` is tesseract's page segmentation mode (3 = automatic page, 6 = one block, 7 = one line).
 */
export async function tesseractWords(
  image: string,
  o: { lang: string; psm?: number; dpi?: number; signal?: AbortSignal },
): Promise<TesseractWord[]> {
  const args = [image, '-', '-l', o.lang, '--psm', String(o.psm ?? 3)];
  if (o.dpi) args.push('--dpi', String(o.dpi));
  args.push('-c', 'preserve_interword_spaces=1', 'tsv');
  const r = await exec(await requireEngine('tesseract'), args, {
    signal: o.signal,
    timeoutMs: TIMEOUT_MS,
    env: ENV,
    failCode: 'UNSUPPORTED_INPUT',
  });
  const words: TesseractWord[] = [];
  for (const row of r.stdout.split('\n').slice(1)) {
    const c = row.split('\t');
    if (c.length < 12 || c[0] !== '5') continue;
    const text = c.slice(11).join('\t').trim();
    if (!text) continue;
    words.push({
      block: Number(c[2]),
      par: Number(c[3]),
      line: Number(c[4]),
      left: Number(c[6]),
      top: Number(c[7]),
      width: Number(c[8]),
      height: Number(c[9]),
      conf: Math.max(0, Number(c[10])),
      text,
    });
  }
  return words;
}

/** The language packs installed ('eng', 'osd', …), read once. */
let languages: Promise<string[]> | undefined;
export function tesseractLanguages(): Promise<string[]> {
  languages ??= (async () => {
    const r = await exec(await requireEngine('tesseract'), ['--list-langs'], { timeoutMs: 10_000 });
    return r.stdout
      .split('\n')
      .slice(1)
      .map((l) => l.trim())
      .filter(Boolean);
  })();
  languages.catch(() => (languages = undefined));
  return languages;
}

/**
 * The clockwise turn that makes the page upright by tesseract's orientation detection (`--psm 0`,
 * its `osd` pack), with its confidence; undefined without the pack or when the page has too little
 * text to tell (tesseract then exits with an error).
 */
export async function tesseractOrientation(
  image: string,
  o: { dpi?: number; signal?: AbortSignal } = {},
): Promise<{ rotate: 0 | 90 | 180 | 270; confidence: number } | undefined> {
  if (!(await tesseractLanguages().catch((): string[] => [])).includes('osd')) return undefined;
  const args = [image, '-', '--psm', '0'];
  if (o.dpi) args.push('--dpi', String(o.dpi));
  try {
    const r = await exec(await requireEngine('tesseract'), args, { signal: o.signal, timeoutMs: TIMEOUT_MS, env: ENV });
    const rotate = Number(/Rotate: (\d+)/.exec(r.stdout)?.[1]);
    const confidence = Number(/Orientation confidence: ([\d.]+)/.exec(r.stdout)?.[1]);
    if (![0, 90, 180, 270].includes(rotate) || !Number.isFinite(confidence)) return undefined;
    return { rotate: rotate as 0 | 90 | 180 | 270, confidence };
  } catch (e) {
    if (o.signal?.aborted) throw e;
    return undefined;
  }
}

/** The installed version ('5.3.0'), for results. */
let version: Promise<string> | undefined;
export function tesseractVersion(): Promise<string> {
  version ??= (async () => {
    const r = await exec(await requireEngine('tesseract'), ['--version'], { timeoutMs: 10_000 });
    return /tesseract (\S+)/.exec(r.stdout + r.stderr)?.[1] ?? 'unknown';
  })();
  return version;
}
