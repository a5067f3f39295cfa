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

/**
 * Loads a PDF that qpdf has counted `pages` in. pdf-lib walks the page tree itself and is less forgiving:
 * a /Pages loop overflows its stack and a malformed tree yields fewer pages, so the walk is done here
 * once and a tree it cannot read completely is refused rather than processed in part.
 */
export async function loadPdf(file: string, name = file, pages?: number, opts: { incremental?: boolean } = {}): Promise<PDFDocument> {
  const { PDFDocument } = await getPdfLib();
  let doc: PDFDocument;
  try {
    // incremental: the original bytes are kept and changes are tracked, for PDFDocument.commit().
    doc = await PDFDocument.load(await readFile(file), { updateMetadata: false, forIncrementalUpdate: opts.incremental ?? false });
  } catch (e) {
    throw new KilnError('UNSUPPORTED_INPUT', `${name} could not be parsed as a PDF: ${(e as Error).message.split('\n')[0]}`, { cause: e });
  }
  let found: number;
  try {
    found = doc.getPages().length;
  } catch (e) {
    throw damagedPageTree(name, e);
  }
  if (found === 0 || (pages !== undefined && found !== pages)) throw damagedPageTree(name);
  await normalizePageGeometry(doc);
  return doc;
}

/** The box viewers (pdf.js, Acrobat) give a page whose media box is missing, broken or of no area: US Letter. */
const DEFAULT_MEDIA_BOX = [0, 0, 612, 792];

/**
 * Puts right what viewers put right when they show a page, so pdf-lib's getters do not throw (INTERNAL
 * 'Expected instance of PDFArray') and no NaN reaches a drawing: a media box that is missing, a dangling
 * reference or of no area becomes Letter, a crop box that is not four numbers is dropped (the media box
 * applies), a /Rotate that is not a multiple of 90 becomes 0 (ISO 32000: it shall be one).
 */
async function normalizePageGeometry(doc: PDFDocument): Promise<void> {
  const { PDFArray, PDFName, PDFNumber } = await getPdfLib();
  const box = (node: import('@cantoo/pdf-lib').PDFPageLeaf, key: string): number[] | undefined => {
    const v = doc.context.lookup(node.getInheritableAttribute(PDFName.of(key)));
    if (!(v instanceof PDFArray) || v.size() !== 4) return undefined;
    const nums = v.asArray().map((x) => doc.context.lookup(x));
    if (!nums.every((x) => x instanceof PDFNumber && Number.isFinite(x.asNumber()))) return undefined;
    const [x1, y1, x2, y2] = nums.map((x) => (x as import('@cantoo/pdf-lib').PDFNumber).asNumber());
    return x1 === x2 || y1 === y2 ? undefined : [x1!, y1!, x2!, y2!];
  };
  for (const page of doc.getPages()) {
    const node = page.node;
    if (!box(node, 'MediaBox')) node.set(PDFName.of('MediaBox'), doc.context.obj(DEFAULT_MEDIA_BOX));
    if (node.getInheritableAttribute(PDFName.of('CropBox')) !== undefined && !box(node, 'CropBox')) {
      // Inherited from a /Pages node: override it here rather than change the other pages.
      node.set(PDFName.of('CropBox'), doc.context.obj(box(node, 'MediaBox')!));
    }
    const rotate = doc.context.lookup(node.getInheritableAttribute(PDFName.of('Rotate')));
    if (rotate !== undefined && !(rotate instanceof PDFNumber && Number.isInteger(rotate.asNumber()) && rotate.asNumber() % 90 === 0))
      node.set(PDFName.of('Rotate'), PDFNumber.of(0));
  }
}

function damagedPageTree(name: string, cause?: unknown): KilnError {
  return new KilnError('UNSUPPORTED_INPUT', `${name} has a damaged page tree. repair-pdf may be able to fix it.`, {
    reason: 'pdf-corrupt',
    cause,
  });
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
  const full =
    h.length === 3
      ? h
          .split('')
          .map((c) => c + c)
          .join('')
      : h;
  if (!/^[0-9a-f]{6}$/i.test(full)) throw new KilnError('VALIDATION_ERROR', `"${hex}" is not a colour (#rrggbb).`);
  return { r: parseInt(full.slice(0, 2), 16) / 255, g: parseInt(full.slice(2, 4), 16) / 255, b: parseInt(full.slice(4, 6), 16) / 255 };
}

const DEJAVU = '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf';
const DEJAVU_BOLD = '/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf';
const NOTO_CJK = '/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc';
const NOTO_CJK_BOLD = '/usr/share/fonts/opentype/noto/NotoSansCJK-Bold.ttc';

/**
 * The face of the Noto Sans CJK collection (fonts-noto-cjk) whose glyph forms suit the text: Korean for
 * Hangul, Japanese for kana, else Simplified Chinese (the collection's faces share the Han characters;
 * the regional forms of some differ).
 */
function cjkFace(text: string, bold: boolean): string {
  const region = /[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]/u.test(text) ? 'kr' : /[\u3040-\u30ff\u31f0-\u31ff]/u.test(text) ? 'jp' : 'sc';
  return `NotoSansCJK${region}-${bold ? 'Bold' : 'Regular'}`;
}

/**
 * A font that can draw `text`: Helvetica (one of the 14 standard fonts, nothing embedded) when the text
 * is WinAnsi (Latin-1), else the first of DejaVu Sans (Greek, Cyrillic, Hebrew, Arabic letters, many
 * symbols) and Noto Sans CJK (Chinese, Japanese, Korean, with Latin) that covers it all, embedded as a
 * subset through @cantoo/fontkit with a ToUnicode map, so the text stays searchable and extractable.
 * Text no installed font covers is a VALIDATION_ERROR naming the characters.
 */
export async function fontFor(doc: PDFDocument, text: string, bold = false): Promise<PDFFont> {
  const { StandardFonts } = await getPdfLib();
  // @cantoo/pdf-lib encodes characters a standard font lacks as "?" without an error: check coverage.
  const std = await doc.embedFont(bold ? StandardFonts.HelveticaBold : StandardFonts.Helvetica);
  const set = new Set(std.getCharacterSet());
  let missing = [...new Set(text)].filter((ch) => !/\s/.test(ch) && !set.has(ch.codePointAt(0)!));
  if (missing.length === 0) return std;
  const fontkit = ((m) => m.default ?? m)((await import('@cantoo/fontkit')) as unknown as { default?: Fontkit } & Fontkit);
  const tried = ['Helvetica'];
  for (const c of [
    { file: bold ? DEJAVU_BOLD : DEJAVU, name: 'DejaVu Sans' },
    { file: bold ? NOTO_CJK_BOLD : NOTO_CJK, name: 'Noto Sans CJK', postscriptName: cjkFace(text, bold) },
  ]) {
    const bytes = await readFile(c.file).catch(() => undefined);
    if (!bytes) continue;
    tried.push(c.name);
    // fontkit draws missing glyphs as .notdef boxes without complaint: check before embedding (an
    // embedded font is written into the file even when nothing is drawn with it).
    const face = fontkit.create(bytes, c.postscriptName);
    missing = missing.filter((ch) => !face.hasGlyphForCodePoint(ch.codePointAt(0)!));
    if ([...new Set(text)].every((ch) => /\s/.test(ch) || face.hasGlyphForCodePoint(ch.codePointAt(0)!))) {
      doc.registerFontkit(fontkit as unknown as Parameters<PDFDocument['registerFontkit']>[0]);
      return doc.embedFont(bytes, { subset: true, ...(c.postscriptName ? { postscriptName: c.postscriptName } : {}) });
    }
  }
  throw new KilnError(
    'VALIDATION_ERROR',
    tried.length > 1
      ? missing.length
        ? `No installed font can draw ${missing.slice(0, 5).join(' ')} (tried ${tried.join(', ')}).`
        : `No one installed font can draw all of "${text}" (tried ${tried.join(', ')}): split the scripts.`
      : `"${text}" has characters outside Latin-1; drawing them needs fonts-dejavu-core or fonts-noto-cjk, neither of which is installed.`,
  );
}

/** The part of @cantoo/fontkit used to check coverage before embedding. */
interface Fontkit {
  create(bytes: Buffer, postscriptName?: string): { hasGlyphForCodePoint(codePoint: number): boolean };
}

/** The visible size of a page (crop box, /Rotate applied) and its rotation. */
export function visibleSize(page: import('@cantoo/pdf-lib').PDFPage): {
  width: number;
  height: number;
  rotation: number;
  x: number;
  y: number;
} {
  const box = page.getCropBox();
  const rotation = ((page.getRotation().angle % 360) + 360) % 360;
  const swap = rotation === 90 || rotation === 270;
  return { width: swap ? box.height : box.width, height: swap ? box.width : box.height, rotation, x: box.x, y: box.y };
}

type PDFPage = import('@cantoo/pdf-lib').PDFPage;

/**
 * Maps a point of the page as a person sees it (origin bottom-left of the visible, rotated page) to
 * user space, and a visible angle to the angle to draw at. /Rotate turns the page clockwise.
 */
export function visibleToUser(page: PDFPage, vx: number, vy: number, angle = 0): { x: number; y: number; angle: number } {
  const box = page.getCropBox();
  const r = visibleSize(page).rotation;
  const { x: x0, y: y0, width: w, height: h } = box;
  switch (r) {
    case 90:
      return { x: x0 + w - vy, y: y0 + vx, angle: angle + 90 };
    case 180:
      return { x: x0 + w - vx, y: y0 + h - vy, angle: angle + 180 };
    case 270:
      return { x: x0 + vy, y: y0 + h - vx, angle: angle + 270 };
    default:
      return { x: x0 + vx, y: y0 + vy, angle };
  }
}

export type Anchor = 'tl' | 'tc' | 'tr' | 'l' | 'c' | 'r' | 'bl' | 'bc' | 'br';

/**
 * Draws `text` so that its rotated bounding box sits at `anchor` of the visible page (`margin` from the
 * edges), upright as seen by a reader whatever the page's /Rotate. Returns the visible centre used.
 */
export async function drawAnchoredText(
  page: PDFPage,
  text: string,
  o: { font: PDFFont; size: number; anchor: Anchor; margin: number; rotation?: number; opacity?: number; color?: Rgb },
): Promise<{ cx: number; cy: number }> {
  const { rgb, degrees } = await getPdfLib();
  const { width: W, height: H } = visibleSize(page);
  // Several lines ("CONFIDENTIAL\nDRAFT") are one block, each line centred in it: measured as one string,
  // the block was as wide as both lines and one line high, and landed off its anchor.
  const lines = text.split(/\r\n|\r|\n/);
  const widths = lines.map((l) => o.font.widthOfTextAtSize(l, o.size));
  const tw = Math.max(...widths);
  const lineH = o.font.heightAtSize(o.size, { descender: false });
  const lead = o.size * 1.2;
  const th = lineH + (lines.length - 1) * lead;
  const t = ((o.rotation ?? 0) * Math.PI) / 180;
  const bw = Math.abs(tw * Math.cos(t)) + Math.abs(th * Math.sin(t));
  const bh = Math.abs(tw * Math.sin(t)) + Math.abs(th * Math.cos(t));
  const col = o.anchor.endsWith('l') ? 'l' : o.anchor.endsWith('r') ? 'r' : 'c';
  const row = o.anchor.startsWith('t') ? 't' : o.anchor.startsWith('b') ? 'b' : 'c';
  const cx = col === 'l' ? o.margin + bw / 2 : col === 'r' ? W - o.margin - bw / 2 : W / 2;
  const cy = row === 'b' ? o.margin + bh / 2 : row === 't' ? H - o.margin - bh / 2 : H / 2;
  const c = o.color ?? { r: 0, g: 0, b: 0 };
  for (const [i, line] of lines.entries()) {
    // Baseline origin of the line in the block (centre at 0,0, unrotated), then rotated about the centre.
    const lx = -widths[i]! / 2;
    const ly = th / 2 - lineH - i * lead;
    const vx = cx + Math.cos(t) * lx - Math.sin(t) * ly;
    const vy = cy + Math.sin(t) * lx + Math.cos(t) * ly;
    const u = visibleToUser(page, vx, vy, o.rotation ?? 0);
    page.drawText(line, {
      x: u.x,
      y: u.y,
      size: o.size,
      font: o.font,
      color: rgb(c.r, c.g, c.b),
      opacity: o.opacity ?? 1,
      rotate: degrees(u.angle),
    });
  }
  return { cx, cy };
}

/**
 * Draws an embedded page (its crop box) into the box (x, y, w, h) of `sheet`, scaled to fit and centred,
 * turned by the source page's /Rotate so it appears as a reader saw it.
 */
export async function placePage(
  sheet: PDFPage,
  embedded: import('@cantoo/pdf-lib').PDFEmbeddedPage,
  rotation: number,
  box: { x: number; y: number; w: number; h: number },
): Promise<void> {
  const { degrees } = await getPdfLib();
  const swap = rotation === 90 || rotation === 270;
  const pw = swap ? embedded.height : embedded.width;
  const ph = swap ? embedded.width : embedded.height;
  const s = Math.min(box.w / pw, box.h / ph);
  const vw = pw * s;
  const vh = ph * s;
  const x = box.x + (box.w - vw) / 2;
  const y = box.y + (box.h - vh) / 2;
  const W = embedded.width * s;
  const H = embedded.height * s;
  // pdf-lib rotates counter-clockwise about (x, y); a clockwise /Rotate is a negative angle.
  const at =
    rotation === 90
      ? { x, y: y + W, r: -90 }
      : rotation === 180
        ? { x: x + W, y: y + H, r: -180 }
        : rotation === 270
          ? { x: x + H, y, r: -270 }
          : { x, y, r: 0 };
  sheet.drawPage(embedded, { x: at.x, y: at.y, xScale: s, yScale: s, rotate: degrees(at.r) });
}

/** Embeds the pages of `src` (by 0-based index) into `dst`, clipped to each page's crop box. */
export async function embedPages(
  dst: PDFDocument,
  src: PDFDocument,
  indices: number[],
): Promise<import('@cantoo/pdf-lib').PDFEmbeddedPage[]> {
  const pages = src.getPages();
  const { PDFArray, PDFName, PDFStream } = await getPdfLib();
  const isStream = (o: unknown) => src.context.lookup(o as Parameters<typeof src.context.lookup>[0]) instanceof PDFStream;
  return Promise.all(
    indices.map((i) => {
      const p = pages[i]!;
      // A content reference to an object that is not there (a damaged file qpdf reads on) is null to a
      // viewer, and to qpdf: drop it, as pdf-lib's embedder failed on it with an INTERNAL error.
      const contents = p.node.get(PDFName.of('Contents'));
      const list = src.context.lookup(contents);
      if (list instanceof PDFArray) {
        const kept = list.asArray().filter(isStream);
        if (kept.length !== list.size()) p.node.set(PDFName.of('Contents'), src.context.obj(kept));
      } else if (contents && !isStream(contents)) p.node.delete(PDFName.of('Contents'));
      // A page without a content stream is a valid blank page, but pdf-lib refuses to embed it.
      const now = src.context.lookup(p.node.get(PDFName.of('Contents')));
      if (!now || (now instanceof PDFArray && now.size() === 0))
        p.node.set(PDFName.of('Contents'), src.context.register(src.context.stream('')));
      const b = p.getCropBox();
      return dst.embedPage(p, { left: b.x, bottom: b.y, right: b.x + b.width, top: b.y + b.height });
    }),
  );
}
