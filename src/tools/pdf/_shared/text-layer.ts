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

/** A line in the displayed page's points, origin at the top left. */
export interface LayerLine {
  text: string;
  x: number;
  y: number;
  width: number;
  height: number;
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
  const [bx, by] = rot === 90 ? [0, 1] : rot === 180 ? [-1, 0] : rot === 270 ? [0, -1] : [1, 0];
  const [ux, uy] = rot === 90 ? [-1, 0] : rot === 180 ? [0, -1] : rot === 270 ? [1, 0] : [0, 1];
  let ops = 'BT\n3 Tr\n';
  for (const l of lines) {
    const hex = utf16Hex(l.text);
    const chars = hex.length / 4;
    if (!chars || l.height <= 0 || l.width <= 0) continue;
    const size = l.height;
    const scale = (100 * l.width) / (chars * 0.5 * size);
    // Baseline a fifth of the box above its bottom: descenders sit below it.
    const [ex, ey] = at(l.x, l.y + l.height * 0.8);
    ops += `/FKilnOcr ${n(size)} Tf\n${n(scale)} Tz\n${bx} ${by} ${ux} ${uy} ${n(ex)} ${n(ey)} Tm\n<${hex}> Tj\n`;
  }
  ops += 'ET\n';
  const ctx = doc.context;
  const before = ctx.register(ctx.flateStream('q\n'));
  const after = ctx.register(ctx.flateStream(`Q\n${ops}`));
  page.node.normalize();
  if (!page.node.wrapContentStreams(before, after)) page.node.set(PDFName.of('Contents'), ctx.obj([before, after]));
  page.node.setFontDictionary(PDFName.of('FKilnOcr'), font);
}
