/**
 * The shape of an OCR result, whatever engine produced it: blocks of lines (each with its box in
 * image pixels and a confidence 0–1), in reading order, and the text they make. Tesseract segments
 * the page itself; the detector's lines are grouped into blocks here (columns side by side are read
 * left column first).
 */
import type { TesseractWord } from '../../engines/tesseract.js';

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface OcrWord {
  text: string;
  confidence: number;
  box: Box;
  /** Degrees clockwise the text runs at on the image (90: down the page), when not level. */
  angle?: number;
}

export interface OcrLine {
  text: string;
  confidence: number;
  box: Box;
  /** As a word's. */
  angle?: number;
  words?: OcrWord[];
}

export interface OcrBlock {
  text: string;
  confidence: number;
  box: Box;
  lines: OcrLine[];
}

export interface OcrPage {
  width: number;
  height: number;
  text: string;
  confidence: number;
  blocks: OcrBlock[];
}

const round = (n: number, d = 3) => Math.round(n * 10 ** d) / 10 ** d;

export function union(boxes: Box[]): Box {
  const x0 = Math.min(...boxes.map((b) => b.x));
  const y0 = Math.min(...boxes.map((b) => b.y));
  const x1 = Math.max(...boxes.map((b) => b.x + b.width));
  const y1 = Math.max(...boxes.map((b) => b.y + b.height));
  return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
}

/** Mean weighted by text length, so a stray one-letter box does not weigh like a sentence. */
function weighted(items: { text: string; confidence: number }[]): number {
  const n = items.reduce((a, i) => a + Math.max(1, i.text.length), 0);
  return n ? round(items.reduce((a, i) => a + i.confidence * Math.max(1, i.text.length), 0) / n) : 0;
}

function block(lines: OcrLine[]): OcrBlock {
  return { text: lines.map((l) => l.text).join('\n'), confidence: weighted(lines), box: union(lines.map((l) => l.box)), lines };
}

export function page(width: number, height: number, blocks: OcrBlock[]): OcrPage {
  return {
    width,
    height,
    text: blocks.map((b) => b.text).join('\n\n'),
    confidence: weighted(blocks.flatMap((b) => b.lines)),
    blocks,
  };
}

/** Tesseract's words → blocks and lines, boxes divided by `scale` (the image may have been enlarged). */
export function fromTesseract(words: TesseractWord[], scale = 1): OcrBlock[] {
  const blocks = new Map<number, Map<string, OcrWord[]>>();
  for (const w of words) {
    const lines = blocks.get(w.block) ?? blocks.set(w.block, new Map()).get(w.block)!;
    const key = `${w.par}.${w.line}`;
    const box = {
      x: round(w.left / scale, 1),
      y: round(w.top / scale, 1),
      width: round(w.width / scale, 1),
      height: round(w.height / scale, 1),
    };
    (lines.get(key) ?? lines.set(key, []).get(key)!).push({ text: w.text, confidence: round(w.conf / 100), box });
  }
  return [...blocks.values()].map((lines) =>
    block(
      [...lines.values()].map((ws) => ({
        text: ws.map((w) => w.text).join(' '),
        confidence: weighted(ws),
        box: union(ws.map((w) => w.box)),
        words: ws,
      })),
    ),
  );
}

const overlapX = (a: Box, b: Box) => Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
const overlapY = (a: Box, b: Box) => Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);

/**
 * Detected lines → blocks: a line joins the block whose last line is just above it (gap under 1.2
 * line heights) and overlaps it horizontally. Blocks are read top to bottom, and side by side
 * (overlapping vertically) left to right, which reads two columns column by column.
 */
export function fromLines(input: OcrLine[]): OcrBlock[] {
  const lines = input.filter((l) => l.text.trim()).sort((a, b) => a.box.y - b.box.y || a.box.x - b.box.x);
  // Pieces of one line that the detector split (a wide word gap) are joined first.
  const merged: OcrLine[] = [];
  for (const l of [...lines].sort((a, b) => a.box.x - b.box.x)) {
    const h = l.box.height;
    const m = merged.find((o) => {
      const gap = l.box.x - (o.box.x + o.box.width);
      return overlapY(o.box, l.box) > 0.6 * Math.min(h, o.box.height) && gap >= -0.5 * h && gap < 1.5 * Math.max(h, o.box.height);
    });
    if (m) {
      m.words = [
        ...(m.words ?? [{ text: m.text, confidence: m.confidence, box: m.box }]),
        { text: l.text, confidence: l.confidence, box: l.box },
      ];
      m.text = `${m.text} ${l.text}`;
      m.confidence = weighted(m.words);
      m.box = union([m.box, l.box]);
    } else merged.push({ ...l });
  }
  merged.sort((a, b) => a.box.y - b.box.y || a.box.x - b.box.x);
  const groups: OcrLine[][] = [];
  for (const l of merged) {
    const g = groups.find((g) => {
      const last = g[g.length - 1]!;
      const gap = l.box.y - (last.box.y + last.box.height);
      return (
        gap > -0.5 * l.box.height &&
        gap < 1.2 * Math.max(l.box.height, last.box.height) &&
        overlapX(last.box, l.box) > 0.3 * Math.min(l.box.width, last.box.width)
      );
    });
    if (g) g.push(l);
    else groups.push([l]);
  }
  const blocks = groups.map(block);
  return blocks.sort((a, b) =>
    overlapY(a.box, b.box) > 0.3 * Math.min(a.box.height, b.box.height) ? a.box.x - b.box.x : a.box.y - b.box.y,
  );
}
