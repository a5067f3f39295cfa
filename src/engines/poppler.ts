/**
 * Poppler utilities (GPL-2.0), run as separate programs: pdftotext for text, pdfinfo for page boxes,
 * pdftoppm for rasterizing.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { KilnError } from '../core/errors.js';
import { exec } from '../core/process.js';
import { requireEngine } from './registry.js';

const TIMEOUT_MS = 180_000;

async function bin(name: 'pdftotext' | 'pdfinfo' | 'pdftoppm'): Promise<string> {
  // The registry knows poppler by pdftoppm; the other programs ship in the same package, same directory.
  const p = await requireEngine('poppler');
  return p.replace(/pdftoppm$/, name);
}

/** Text of the PDF (all pages, or first..last), UTF-8, pages separated by form feeds. */
export async function pdfToText(
  file: string,
  out: string,
  o: { signal?: AbortSignal; first?: number; last?: number; layout?: boolean } = {},
): Promise<void> {
  const args = ['-enc', 'UTF-8', ...(o.layout ? ['-layout'] : [])];
  if (o.first) args.push('-f', String(o.first));
  if (o.last) args.push('-l', String(o.last));
  await exec(await bin('pdftotext'), [...args, file, out], { signal: o.signal, timeoutMs: TIMEOUT_MS, failCode: 'UNSUPPORTED_INPUT' });
}

/** Text of one page (1-based), for checks and tests. */
export async function pageText(file: string, page: number, signal?: AbortSignal): Promise<string> {
  const r = await exec(await bin('pdftotext'), ['-enc', 'UTF-8', '-layout', '-f', String(page), '-l', String(page), file, '-'], {
    signal,
    timeoutMs: TIMEOUT_MS,
    failCode: 'UNSUPPORTED_INPUT',
  });
  return r.stdout;
}

export interface PageBox {
  page: number;
  /** Size in points as displayed (after /Rotate). */
  width: number;
  height: number;
  rotate: number;
}

/** Page sizes (crop box, rotation applied) of pages first..last. */
export async function pageBoxes(file: string, first: number, last: number, signal?: AbortSignal): Promise<PageBox[]> {
  const r = await exec(await bin('pdfinfo'), ['-f', String(first), '-l', String(last), file], {
    signal,
    timeoutMs: TIMEOUT_MS,
    failCode: 'UNSUPPORTED_INPUT',
  });
  const boxes = new Map<number, PageBox>();
  for (const line of r.stdout.split('\n')) {
    let m = /^Page\s+(\d+) size:\s+([\d.]+) x ([\d.]+)/.exec(line);
    if (m) {
      boxes.set(Number(m[1]), {
        page: Number(m[1]),
        width: Number(m[2]),
        height: Number(m[3]),
        rotate: boxes.get(Number(m[1]))?.rotate ?? 0,
      });
      continue;
    }
    m = /^Page\s+(\d+) rot:\s+(\d+)/.exec(line);
    if (m) {
      const b = boxes.get(Number(m[1]));
      if (b) b.rotate = Number(m[2]);
    }
  }
  return [...boxes.values()].map((b) => (b.rotate % 180 === 90 ? { ...b, width: b.height, height: b.width } : b));
}

/**
 * Renders pages `first`..`last` with one pdftoppm (the document is parsed once, not once a page: 300
 * pages one at a time took 12 s) as renderPage does each; the PNG of each page, in page order. `outBase`
 * gets `-N.png` appended (pdftoppm pads N to the digits of the document's page count).
 */
export async function renderPages(
  file: string,
  first: number,
  last: number,
  dpi: number,
  outBase: string,
  signal?: AbortSignal,
): Promise<{ page: number; png: string }[]> {
  const args = ['-cropbox', '-r', String(dpi), '-f', String(first), '-l', String(last), '-png', file, outBase];
  await exec(await bin('pdftoppm'), args, { signal, timeoutMs: TIMEOUT_MS, failCode: 'UNSUPPORTED_INPUT' });
  const dir = path.dirname(outBase);
  const prefix = `${path.basename(outBase)}-`;
  const made = new Map<number, string>();
  for (const name of await readdir(dir)) {
    const m = name.startsWith(prefix) ? /^(\d+)\.png$/.exec(name.slice(prefix.length)) : null;
    if (m) made.set(Number(m[1]), path.join(dir, name));
  }
  const out: { page: number; png: string }[] = [];
  for (let page = first; page <= last; page++) {
    const png = made.get(page);
    if (!png) throw new KilnError('UNSUPPORTED_INPUT', `Page ${page} could not be rendered.`);
    out.push({ page, png });
  }
  return out;
}

/**
 * Renders one page (1-based) to a PNG at `dpi`, as a viewer shows it: its crop box (pdftoppm renders the
 * whole media box unless told, so a cropped page came back uncropped and OCR boxes were misplaced),
 * /Rotate applied. `outBase` gets `.png` appended by pdftoppm.
 */
export async function renderPage(file: string, page: number, dpi: number, outBase: string, signal?: AbortSignal): Promise<string> {
  const args = ['-cropbox', '-r', String(dpi), '-f', String(page), '-l', String(page), '-singlefile', '-png', file, outBase];
  await exec(await bin('pdftoppm'), args, {
    signal,
    timeoutMs: TIMEOUT_MS,
    failCode: 'UNSUPPORTED_INPUT',
  });
  return `${outBase}.png`;
}
