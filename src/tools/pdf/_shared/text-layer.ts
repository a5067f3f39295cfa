/**
 * An invisible, selectable text layer over PDF pages, the way tesseract's own PDF renderer makes one:
 * a Type0 font with Identity-H encoding whose single glyph is empty (tesseract's GlyphLessFont,
 * pdf.ttf from its data directory), each character's CID equal to its UTF-16 code and a ToUnicode map
 * that says so; text drawn in render mode 3 (neither filled nor stroked), each line scaled to its
 * box. The page's own content streams are left as they are, wrapped in q … Q so a state they leave
 * behind cannot move the layer; nothing on the page changes visibly.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { KilnError } from '../../../core/errors.js';
import { getPdfLib } from '../../../engines/pdf-lib.js';

type PDFDocument = import('@cantoo/pdf-lib').PDFDocument;
type PDFRef = import('@cantoo/pdf-lib').PDFRef;

/** Text in the displayed page's points, origin at the top left: the axis-aligned box around it. */
export interface LayerBox {
  text: string;
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * A line: the degrees clockwise its text runs at (90: down the page) when not level, and its words
 * where the engine gives them. Words are set on the line's baseline at the line's size, each scaled
 * to its own length, as tesseract's PDF renderer does: text at one size on one baseline is what
 * text extraction (pdftotext) reads as one line; each word at its own height splits lines.
 */
export interface LayerLine extends LayerBox {
  angle?: number;
  words?: LayerBox[];
}

/**
 * The length and height of text turned by `deg` whose axis-aligned box is `w` × `h`: the turned
 * rectangle's sides. OCR's text runs within a few degrees of a quarter turn, far from the diagonal
 * where the sides cannot be told; there the box itself is taken.
 */
function sides(w: number, h: number, deg: number): [number, number] {
  const a = (deg * Math.PI) / 180;
  const c = Math.abs(Math.cos(a));
  const s = Math.abs(Math.sin(a));
  const det = c * c - s * s;
  if (Math.abs(det) < 0.5) return [w, h];
  return [Math.max(0, (w * c - h * s) / det), Math.max(0, (h * c - w * s) / det)];
}

const GLYPHLESS = [
  process.env.TESSDATA_PREFIX ? `${process.env.TESSDATA_PREFIX}/pdf.ttf` : '',
  '/usr/share/tesseract-ocr/5/tessdata/pdf.ttf',
  '/usr/share/tesseract-ocr/4.00/tessdata/pdf.ttf',
  '/usr/share/tessdata/pdf.ttf',
].filter(Boolean);

const TO_UNICODE = `/CIDInit /ProcSet findresource begin
12 dict begin
begincmap
/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def
/CMapName /Adobe-Identify-UCS def
/CMapType 2 def
1 begincodespacerange
<0000> <FFFF>
endcodespacerange
1 beginbfrange
<0000> <FFFF> <0000>
endbfrange
endcmap
CMapName currentdict /CMap defineresource pop
end
end
`;

/** Registers the glyph-less font in `doc` once; answers its reference. */
export async function glyphlessFont(doc: PDFDocument): Promise<PDFRef> {
  const { PDFName, PDFNumber } = await getPdfLib();
  const file = GLYPHLESS.find((f) => existsSync(f));
  if (!file)
    throw new KilnError(
      'ENGINE_MISSING',
      "tesseract's pdf.ttf (the glyph-less font of its PDF renderer) was not found; install tesseract-ocr.",
    );
  const ctx = doc.context;
  const ttf = await readFile(file);
  const fontFile = ctx.register(ctx.flateStream(ttf, { Length1: ttf.length }));
  const map = Buffer.alloc(65536 * 2);
  for (let i = 0; i < 65536; i++) map.writeUInt16BE(1, i * 2);
  const cidToGid = ctx.register(ctx.flateStream(map));
  const descriptor = ctx.register(
    ctx.obj({
      Type: 'FontDescriptor',
      FontName: 'GlyphLessFont',
      Flags: 5,
      FontBBox: [0, 0, 500, 1000],
      ItalicAngle: 0,
      Ascent: 1000,
      Descent: -1,
      CapHeight: 1000,
      StemV: 80,
      FontFile2: fontFile,
    }),
  );
  const cidFont = ctx.register(
    ctx.obj({
      Type: 'Font',
      Subtype: 'CIDFontType2',
      BaseFont: 'GlyphLessFont',
      CIDSystemInfo: { Registry: ctx.obj('Adobe'), Ordering: ctx.obj('Identity'), Supplement: 0 },
      FontDescriptor: descriptor,
      CIDToGIDMap: cidToGid,
      DW: 500,
    }),
  );
  // ctx.obj turns plain strings into names; the CIDSystemInfo strings must be PDF strings.
  const { PDFString } = await getPdfLib();
  const info = ctx.lookup(cidFont) as import('@cantoo/pdf-lib').PDFDict;
  info.set(
    PDFName.of('CIDSystemInfo'),
    ctx.obj({ Registry: PDFString.of('Adobe'), Ordering: PDFString.of('Identity'), Supplement: PDFNumber.of(0) }),
  );
  const toUnicode = ctx.register(ctx.flateStream(TO_UNICODE));
  return ctx.register(
    ctx.obj({
      Type: 'Font',
      Subtype: 'Type0',
      BaseFont: 'GlyphLessFont',
      Encoding: 'Identity-H',
      DescendantFonts: [cidFont],
      ToUnicode: toUnicode,
    }),
  );
}

const n = (v: number) => (Math.round(v * 1000) / 1000).toString();

function utf16Hex(s: string): string {
  let hex = '';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    // The font's CIDs are 16 bits: characters beyond the BMP are left out of the layer.
    if (c <= 0xffff) hex += c.toString(16).padStart(4, '0');
  }
  return hex;
}

/** Adds `lines` (displayed-page points) to page `index` as invisible text in `font`. */
export async function addTextLayer(doc: PDFDocument, index: number, font: PDFRef, lines: LayerLine[]): Promise<void> {
  const { PDFName } = await getPdfLib();
  const page = doc.getPage(index);
  const crop = page.getCropBox();
  const rot = (((page.getRotation().angle % 360) + 360) % 360) as 0 | 90 | 180 | 270;
  const [x0, y0, x1, y1] = [crop.x, crop.y, crop.x + crop.width, crop.y + crop.height];
  // Displayed (u right, v down) → user space, and the directions of the baseline and of "up".
  const at = (u: number, v: number): [number, number] =>
    rot === 90 ? [x0 + v, y0 + u] : rot === 180 ? [x1 - u, y0 + v] : rot === 270 ? [x1 - v, y1 - u] : [x0 + u, y1 - v];
  // A direction on the displayed page (u right, v down) in user space.
  const dir = (du: number, dv: number): [number, number] =>
    rot === 90 ? [dv, du] : rot === 180 ? [-du, dv] : rot === 270 ? [-dv, -du] : [du, -dv];
  let ops = 'BT\n3 Tr\n';
  for (const l of lines) {
    const a = ((l.angle ?? 0) * Math.PI) / 180;
    const [length, size] = sides(l.width, l.height, l.angle ?? 0);
    if (size <= 0 || length <= 0) continue;
    // The baseline runs along (du, dv); "down" (toward the descenders) is a quarter turn clockwise of it.
    const [du, dv] = [Math.cos(a), Math.sin(a)];
    const [nu, nv] = [-dv, du];
    const [cu, cv] = [l.x + l.width / 2, l.y + l.height / 2];
    const [bx, by] = dir(du, dv);
    const [ux, uy] = dir(-nu, -nv);
    for (const w of l.words?.length ? l.words : [l]) {
      const hex = utf16Hex(w.text);
      const chars = hex.length / 4;
      // The word's length along the baseline, and where its centre falls on the line's axis.
      const len = w === l ? length : sides(w.width, w.height, l.angle ?? 0)[0];
      if (!chars || len <= 0) continue;
      const t = (w.x + w.width / 2 - cu) * du + (w.y + w.height / 2 - cv) * dv;
      // Baseline a fifth of the line's height above its bottom (descenders sit below it), from the word's left end.
      const [ex, ey] = at(cu + (t - len / 2) * du + 0.3 * size * nu, cv + (t - len / 2) * dv + 0.3 * size * nv);
      const scale = (100 * len) / (chars * 0.5 * size);
      ops += `/FKilnOcr ${n(size)} Tf\n${n(scale)} Tz\n${n(bx)} ${n(by)} ${n(ux)} ${n(uy)} ${n(ex)} ${n(ey)} Tm\n<${hex}> Tj\n`;
    }
  }
  ops += 'ET\n';
  const ctx = doc.context;
  const before = ctx.register(ctx.flateStream('q\n'));
  const after = ctx.register(ctx.flateStream(`Q\n${ops}`));
  page.node.normalize();
  if (!page.node.wrapContentStreams(before, after)) page.node.set(PDFName.of('Contents'), ctx.obj([before, after]));
  page.node.setFontDictionary(PDFName.of('FKilnOcr'), font);
}
