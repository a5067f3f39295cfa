/**
 * Reading one page image at a tier. 'fast' runs tesseract on the (optionally enhanced) page.
 * 'balanced' and 'best' level the page, detect text lines with PP-OCRv4 on the leased runtime
 * generation and recognise each line: with PP-OCRv4's recogniser for English, Chinese and 'auto',
 * and with tesseract's model for the hinted language on each detected line for Korean, Japanese,
 * German, French and Spanish (the only offline recognisers for Hangul here; tesseract reads a
 * cleanly cut line far better than a whole page). 'best' also scores the enhanced variant against
 * the plain one and keeps the better. Boxes are given in the input image's pixels.
 */
import { mapPool } from '../../core/pool.js';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Sharp } from 'sharp';
import { tesseractOrientation, tesseractVersion, tesseractWords } from '../../engines/tesseract.js';
import type { PpocrOutput } from '../models/ppocr-v4.js';
import type { Lease } from '../ocr/generations.js';
import { fromLines, fromTesseract, type OcrBlock, type OcrLine, type OcrPage, page, union } from '../ocr/layout.js';
import { placeBlocks, type Stage, unrotateStage, unturnStage } from '../ocr/placement.js';
import { runModel } from '../run-model.js';
import { enhance, estimateSkew, type Gray, grayToRgb, level, toGray, turn, writePng } from './ocr-prep.js';
import { DET_OPTIONS, type Language, type Quality, TESSERACT_LANG } from './ocr-tiers.js';
import { getSharp } from '../../engines/sharp.js';

export interface Provenance {
  engine: string;
  engineVersion: string;
  requestedQuality: Quality | null;
  actualQuality: Quality;
  language: Language;
  device: 'cpu';
  provider: string;
  degraded: boolean;
  warnings: string[];
  runtimeGeneration: string | null;
  runtimeRelease: string | null;
  runtimeVersion: string | null;
  models: { id: string; sha256: string }[];
}

export interface PageRead {
  page: OcrPage;
  enhance: { applied: boolean; variant: 'plain' | 'enhanced'; deskewDegrees: number };
  /** Clockwise turn the page was read at (balanced/best): 90 or 270 for a page scanned sideways, 180 upside down. */
  orientation?: 0 | 90 | 180 | 270;
  ms: number;
}

export interface ReadOptions {
  quality: Quality;
  language: Language;
  enhance?: boolean | null;
  lease?: Lease;
  workDir: string;
  signal?: AbortSignal;
  progress?: (fraction: number, stage?: string) => void;
}

/** Engines that recognise the detector's lines with tesseract instead of PP-OCR's recogniser. */
const LINE_TESSERACT = new Set<Language>(['ko', 'ja', 'de', 'fr', 'es']);

export async function provenance(o: {
  quality: Quality;
  requested: Quality | null;
  language: Language;
  lease?: Lease;
  warnings: string[];
}): Promise<Provenance> {
  const tv = await tesseractVersion().catch(() => 'unknown');
  if (o.quality === 'fast')
    return {
      engine: 'tesseract',
      engineVersion: tv,
      requestedQuality: o.requested,
      actualQuality: 'fast',
      language: o.language,
      device: 'cpu',
      provider: 'tesseract-lstm',
      degraded: false,
      warnings: o.warnings,
      runtimeGeneration: null,
      runtimeRelease: null,
      runtimeVersion: null,
      models: [],
    };
  const g = o.lease!.generation;
  const lineTess = LINE_TESSERACT.has(o.language);
  return {
    engine: lineTess ? `ppocr-v4-det+tesseract-${TESSERACT_LANG[o.language]}` : 'ppocr-v4',
    engineVersion: lineTess ? `ppocr-v4, tesseract ${tv}` : 'ppocr-v4',
    requestedQuality: o.requested,
    actualQuality: o.quality,
    language: o.language,
    device: 'cpu',
    provider: 'CPUExecutionProvider',
    degraded: false,
    warnings: o.warnings,
    runtimeGeneration: g.id,
    runtimeRelease: g.release,
    runtimeVersion: `${g.runtime.id} ${g.runtime.version}`,
    models: g.models.map((m) => ({ id: m.id, sha256: m.sha256 })),
  };
}

const r1 = (n: number) => Math.round(n * 10) / 10;

/** The stage mapping a page levelled by `-skew` (`lev`) back to the page `g` (none: too small a skew to have been levelled). */
const unskew = (skew: number, lev: { width: number; height: number }, g: { width: number; height: number }): Stage[] =>
  Math.abs(skew) >= 0.3 ? [unrotateStage(-skew, lev, g)] : [];

/**
 * Tesseract sometimes reads two columns as one table of long lines. A gap wider than 2.5 line heights
 * inside a line is a gutter: such lines are cut there and the pieces regrouped column by column.
 */
function splitColumns(blocks: OcrBlock[]): OcrBlock[] {
  let cut = false;
  const lines: OcrLine[] = [];
  for (const b of blocks)
    for (const l of b.lines) {
      const ws = l.words ?? [];
      let start = 0;
      for (let i = 1; i <= ws.length; i++) {
        const gap = i < ws.length ? ws[i]!.box.x - (ws[i - 1]!.box.x + ws[i - 1]!.box.width) : Infinity;
        if (gap > 2.5 * l.box.height) {
          const part = ws.slice(start, i);
          if (i < ws.length) cut = true;
          lines.push(
            part.length === ws.length
              ? l
              : {
                  text: part.map((w) => w.text).join(' '),
                  confidence: part.reduce((a, w) => a + w.confidence, 0) / part.length,
                  box: union(part.map((w) => w.box)),
                  words: part,
                },
          );
          start = i;
        }
      }
      if (!ws.length) lines.push(l);
    }
  return cut ? fromLines(lines) : blocks;
}

let seq = 0;
/** The page as tesseract gets it, written into the work dir: small pages enlarged 2× (capitals about 30 px read best). */
async function tesseractImage(g: Gray, o: ReadOptions): Promise<{ file: string; scale: number }> {
  const scale = Math.max(g.width, g.height) < 1200 ? 2 : 1;
  let img = g;
  if (scale > 1) {
    const sharp = await getSharp();
    const { data, info } = await sharp(g.data, { raw: { width: g.width, height: g.height, channels: 1 } })
      .resize(g.width * scale, g.height * scale, { kernel: 'lanczos3' })
      .greyscale()
      .raw()
      .toBuffer({ resolveWithObject: true });
    img = { width: info.width, height: info.height, data };
  }
  await mkdir(o.workDir, { recursive: true });
  const file = path.join(o.workDir, `ocr-${process.pid}-${++seq}.png`);
  await writePng(img, file);
  return { file, scale };
}

async function readFast(g: Gray, o: ReadOptions): Promise<OcrBlock[]> {
  const { file, scale } = await tesseractImage(g, o);
  const words = await tesseractWords(file, { lang: TESSERACT_LANG[o.language], psm: 3, dpi: 300, signal: o.signal });
  return splitColumns(fromTesseract(words, scale));
}

/** Below this confidence a 'fast' reading of a level page may be an upside-down page read as garbage (an upright page reads at 0.9 and more). */
const FAST_DOUBTFUL = 0.8;

/**
 * Whether a page 'fast' read with little confidence is upside down, by tesseract's orientation
 * detection (about half a read's CPU, so a confident reading is not asked about). A page read upside
 * down comes out as confident-looking garbage only rarely: tesseract's glyphs turned by half read
 * at 0.3–0.5.
 */
async function fastUpsideDown(g: Gray, read: OcrBlock[], o: ReadOptions): Promise<boolean> {
  if (page(g.width, g.height, read).confidence >= FAST_DOUBTFUL) return false;
  const { file } = await tesseractImage(g, o);
  return (await tesseractOrientation(file, { dpi: 300, signal: o.signal }))?.rotate === 180;
}

/** A tesseract reading as a runtime reading: its lines' shapes tell a page scanned sideways (it finds no upside-down lines). */
function fastRead(blocks: OcrBlock[]): RuntimeRead {
  const lines = blocks.flatMap((b) => b.lines).filter((l) => l.text.replace(/\s/g, '').length >= 3);
  return {
    blocks,
    tall: lines.filter((l) => l.box.height > 1.5 * l.box.width).length,
    wide: lines.filter((l) => l.box.width > 1.5 * l.box.height).length,
    flipped: 0,
    lines: lines.length,
  };
}

/**
 * The words tesseract found on one line, joined: Japanese without spaces; Korean with a space only
 * where the page shows one. Tesseract's Korean model splits words between syllables and its word
 * boxes are too loose to tell, so the spaces are taken from the line image: runs of ink-free columns
 * wider than a third of the ink's height (syllables are set about half as far apart). `toPage` maps a word's x in
 * the recognised crop to the page.
 */
function joinWords(
  words: { text: string; left: number; width: number }[],
  language: Language,
  line: { g: Gray; x: number; y: number; width: number; height: number },
  toPage: (x: number) => number,
): string {
  if (language === 'ja') return words.map((w) => w.text).join('');
  if (language !== 'ko') return words.map((w) => w.text).join(' ');
  const { g } = line;
  const x0 = Math.max(0, Math.floor(line.x));
  const x1 = Math.min(g.width, Math.ceil(line.x + line.width));
  const y0 = Math.max(0, Math.floor(line.y));
  const y1 = Math.min(g.height, Math.ceil(line.y + line.height));
  // Measured against the ink's height (about 0.9 em for Hangul): a word space is about 0.4 em, syllables sit about 0.2 em apart.
  let inkRows = 0;
  for (let y = y0; y < y1; y++) {
    for (let x = x0; x < x1; x++) {
      if (g.data[y * g.width + x]! < 128) {
        inkRows++;
        break;
      }
    }
  }
  const minGap = Math.max(2, 0.33 * inkRows);
  const gaps: number[] = [];
  let run = 0;
  for (let x = x0; x < x1; x++) {
    let ink = false;
    for (let y = y0; y < y1 && !ink; y++) ink = g.data[y * g.width + x]! < 128;
    if (!ink) run++;
    else {
      if (run >= minGap && x - run > x0) gaps.push(x - run / 2);
      run = 0;
    }
  }
  const centre = (w: { left: number; width: number }) => toPage(w.left + w.width / 2);
  return words
    .map((w, i) => {
      if (!i) return w.text;
      const a = centre(words[i - 1]!);
      const b = centre(w);
      return (gaps.some((x) => x > a && x < b) ? ' ' : '') + w.text;
    })
    .join('');
}

/** A runtime reading and what its detected lines say about the page's orientation. */
interface RuntimeRead {
  blocks: OcrBlock[];
  /** Detected lines much taller than wide (text running up or down: a page scanned sideways). */
  tall: number;
  wide: number;
  /** Lines the 0°/180° classifier ('best') found upside down, of `lines`. */
  flipped: number;
  lines: number;
}

async function readRuntime(g: Gray, quality: 'balanced' | 'best', o: ReadOptions): Promise<RuntimeRead> {
  const lineTess = LINE_TESSERACT.has(o.language);
  const { output } = await runModel<PpocrOutput>(
    'ppocr-v4',
    { width: g.width, height: g.height, rgb: grayToRgb(g), det: DET_OPTIONS[quality], recognise: !lineTess, angle: quality === 'best' },
    { dataDir: o.lease!.dir, signal: o.signal, progress: (f, s) => o.progress?.(lineTess ? f * 0.3 : f, s) },
  );
  let lines: OcrLine[];
  if (!lineTess) {
    lines = output.lines.map((l) => ({
      text: l.text,
      confidence: Math.round(l.confidence * 1000) / 1000,
      box: { x: r1(l.x), y: r1(l.y), width: r1(l.width), height: r1(l.height) },
    }));
  } else {
    const sharp = await getSharp();
    await mkdir(o.workDir, { recursive: true });
    let done = 0;
    lines = await mapPool(output.lines, 2, async (l) => {
      o.signal?.throwIfAborted();
      const pad = Math.round(l.height * 0.15);
      const left = Math.max(0, Math.floor(l.x) - pad);
      const top = Math.max(0, Math.floor(l.y) - pad);
      const width = Math.min(g.width - left, Math.ceil(l.width) + 2 * pad);
      const height = Math.min(g.height - top, Math.ceil(l.height) + 2 * pad);
      const file = path.join(o.workDir, `line-${process.pid}-${++seq}.png`);
      // Lines are scaled to about 48 px of height, where tesseract's models read best.
      const target = Math.max(24, Math.min(96, Math.round(48 * (height / Math.max(1, l.height)))));
      await sharp(g.data, { raw: { width: g.width, height: g.height, channels: 1 } })
        .extract({ left, top, width: Math.max(1, width), height: Math.max(1, height) })
        .resize({ height: target, kernel: 'lanczos3' })
        .extend({ top: 12, bottom: 12, left: 12, right: 12, background: '#ffffff' })
        .png({ compressionLevel: 1 })
        .toFile(file);
      const words = await tesseractWords(file, { lang: TESSERACT_LANG[o.language], psm: 7, dpi: 300, signal: o.signal });
      o.progress?.(0.3 + (0.7 * ++done) / output.lines.length, 'recognising');
      const f = target / Math.max(1, height);
      const text = joinWords(words, o.language, { g, ...l }, (x) => left + (x - 12) / f);
      const n = words.reduce((a, w) => a + w.text.length, 0);
      const confidence = n ? words.reduce((a, w) => a + (w.conf / 100) * w.text.length, 0) / n : 0;
      return {
        text,
        confidence: Math.round(confidence * 1000) / 1000,
        box: { x: r1(l.x), y: r1(l.y), width: r1(l.width), height: r1(l.height) },
      };
    });
  }
  const det = output.lines;
  return {
    blocks: fromLines(lines),
    tall: det.filter((l) => l.height > 1.5 * l.width).length,
    wide: det.filter((l) => l.width > 1.5 * l.height).length,
    flipped: det.filter((l) => l.flipped).length,
    lines: det.length,
  };
}

/** Score of a reading for choosing between variants: confident characters, not merely many. */
function score(p: OcrPage): number {
  let s = 0;
  for (const b of p.blocks) for (const l of b.lines) s += l.confidence * l.text.replace(/\s/g, '').length * (l.confidence > 0.5 ? 1 : 0.2);
  return s;
}

/** Reads one page image (a sharp pipeline of the decoded, oriented input). */
export async function readPage(img: Sharp, o: ReadOptions): Promise<PageRead> {
  const t0 = performance.now();
  const original = await toGray(img);
  const size = { width: original.width, height: original.height };
  // Every tier reads a levelled page: tesseract's line finder and the detector's boxes both assume level lines.
  const skew = estimateSkew(original);
  const levelled = await level(original, -skew);
  const quality = o.quality;
  const wantEnhance = quality === 'fast' ? o.enhance === true : (o.enhance ?? quality === 'best');
  /** The better variant (plain, enhanced) of the page `g`, its blocks in `g`'s pixels. */
  const readVariants = async (g: Gray, sub: ReadOptions) => {
    const variants: { variant: 'plain' | 'enhanced'; g: Gray }[] = [];
    if (!wantEnhance || quality === 'best') variants.push({ variant: 'plain', g });
    if (wantEnhance) variants.push({ variant: 'enhanced', g: await enhance(g) });
    let best: (RuntimeRead & { variant: 'plain' | 'enhanced'; s: number }) | undefined;
    for (const [i, v] of variants.entries()) {
      const vo = { ...sub, progress: (f: number, s?: string) => sub.progress?.((i + f) / variants.length, s) };
      const r = quality === 'fast' ? fastRead(await readFast(v.g, vo)) : await readRuntime(v.g, quality, vo);
      const s = score(page(g.width, g.height, r.blocks));
      if (!best || s > best.s) best = { ...r, variant: v.variant, s };
    }
    return best!;
  };
  // Most lines upside down (the classifier turns each line, but the page's line order stays reversed)
  // counts half: of two turns of a sideways page, the upright one wins.
  const weight = (r: RuntimeRead & { s: number }) => (r.flipped * 2 > r.lines ? r.s / 2 : r.s);
  /** The page turned clockwise by `deg`, levelled again (a skew measured on sideways text means nothing), read, boxes mapped back. */
  const readTurned = async (deg: 0 | 90 | 180 | 270, sub: ReadOptions) => {
    const g = deg ? await turn(original, deg) : original;
    const sk = deg ? estimateSkew(g) : skew;
    const lev = deg ? await level(g, -sk) : levelled;
    const r = await readVariants(lev, sub);
    const blocks = placeBlocks(r.blocks, [...unskew(sk, lev, g), unturnStage(deg, original)]);
    return { ...r, blocks, deg, skew: sk };
  };
  let pick = await readTurned(0, o);
  // A page scanned sideways: PP-OCR's recogniser reads horizontal lines only, so the detector's tall
  // boxes read as nothing; tesseract reads them, but says nothing of which way they run (a searchable
  // PDF's text layer would lie across them) and its skew was measured on sideways text. Both quarter
  // turns are read and the better kept, the page as it came only when neither reads anything. A
  // page read mostly upside down is read turned by half.
  // 'fast' has no line classifier: a doubtful reading asks tesseract's orientation detection.
  const sideways = pick.tall > pick.wide;
  const upsideDown = !sideways && (quality === 'fast' ? await fastUpsideDown(levelled, pick.blocks, o) : pick.flipped * 2 > pick.lines);
  const turns: (90 | 180 | 270)[] = sideways ? [90, 270] : upsideDown ? [180] : [];
  for (const deg of turns) {
    o.signal?.throwIfAborted();
    const r = await readTurned(deg, { ...o, progress: undefined });
    const better = sideways && !pick.deg ? weight(r) > 0 : weight(r) > weight(pick);
    if (better) pick = r;
  }
  return {
    page: page(size.width, size.height, pick.blocks),
    enhance: { applied: pick.variant === 'enhanced', variant: pick.variant, deskewDegrees: pick.skew },
    ...(pick.deg && { orientation: pick.deg }),
    ms: Math.round(performance.now() - t0),
  };
}
