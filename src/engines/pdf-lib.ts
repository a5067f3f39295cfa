/**
 * pdf-lib (@cantoo/pdf-lib, MIT) in process, for drawing: watermarks, page numbers, stamps, n-up,
 * booklets, boxes, metadata. Loaded lazily so the CLI starts fast. Inputs reach it only after
 * qpdf has vetted them (see tools/pdf/_shared/pdf-input.ts).
 */
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { KilnError } from '../core/errors.js';

export type PdfLib = typeof import('@cantoo/pdf-lib');
type PDFDocument = import('@cantoo/pdf-lib').PDFDocument;
type PDFFont = import('@cantoo/pdf-lib').PDFFont;

let mod: Promise<PdfLib> | undefined;

export function getPdfLib(): Promise<PdfLib> {
  mod ??= import('@cantoo/pdf-lib');
  return mod;
}

export async function loadPdf(file: string, name = file): Promise<PDFDocument> {
  const { PDFDocument } = await getPdfLib();
  try {
    return await PDFDocument.load(await readFile(file), { updateMetadata: false });
  } catch (e) {
    throw new KilnError('UNSUPPORTED_INPUT', `${name} could not be parsed as a PDF: ${(e as Error).message.split('\n')[0]}`, { cause: e });
  }
}

/** Saves to `out` through a temporary name, so a failure never leaves half a file. */
export async function savePdf(doc: PDFDocument, out: string, opts: { useObjectStreams?: boolean } = {}): Promise<void> {
  const tmp = `${out}.partial`;
  try {
    await writeFile(tmp, await doc.save({ useObjectStreams: opts.useObjectStreams ?? true }));
    await rename(tmp, out);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}

export type Rgb = { r: number; g: number; b: number };

/** Parses #rgb / #rrggbb into pdf-lib's 0-1 channels. */
export function hexColor(hex: string): Rgb {
  const h = hex.replace(/^#/, '');
  const full = h.length === 3 ? h.split('').map((c) => c + c).join('') : h;
  if (!/^[0-9a-f]{6}$/i.test(full)) throw new KilnError('VALIDATION_ERROR', `"${hex}" is not a colour (#rrggbb).`);
  return { r: parseInt(full.slice(0, 2), 16) / 255, g: parseInt(full.slice(2, 4), 16) / 255, b: parseInt(full.slice(4, 6), 16) / 255 };
}

/**
 * Helvetica (one of the 14 standard fonts): nothing to embed, drawn text stays extractable. It covers
 * WinAnsi (Latin-1 and a few symbols); other scripts would need fontkit, which is not installed.
 */
export async function fontFor(doc: PDFDocument, text: string, bold = false): Promise<PDFFont> {
  const { StandardFonts } = await getPdfLib();
  const font = await doc.embedFont(bold ? StandardFonts.HelveticaBold : StandardFonts.Helvetica);
  try {
    font.encodeText(text);
  } catch {
    throw new KilnError('VALIDATION_ERROR', `"${text}" has characters outside Latin-1 (WinAnsi), which the built-in PDF font cannot draw.`);
  }
  return font;
}

/** The visible size of a page (crop box, /Rotate applied) and its rotation. */
export function visibleSize(page: import('@cantoo/pdf-lib').PDFPage): { width: number; height: number; rotation: number; x: number; y: number } {
  const box = page.getCropBox();
  const rotation = ((page.getRotation().angle % 360) + 360) % 360;
  const swap = rotation === 90 || rotation === 270;
  return { width: swap ? box.height : box.width, height: swap ? box.width : box.height, rotation, x: box.x, y: box.y };
}
