import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { PDFDocument, PDFName } from '@cantoo/pdf-lib';
import type { KilnError } from '../../../src/core/errors.js';
import { bookletSpreads } from '../../../src/tools/pdf/document/booklet-pdf.js';
import { tempDir } from '../../helpers/fixtures.js';
import { makeTextPdf, pageCount, pageTexts, runPdfTool } from './pdf-helpers.js';

const dir = tempDir('kiln-pdf-layout-');
let eight: string;
const NAMES = ['Alpha', 'Bravo', 'Charlie', 'Delta', 'Echo', 'Foxtrot', 'Golf', 'Hotel'];

/** Text inside a rectangle of a page (pdftotext -x -y -W -H, in pixels at 72 dpi = points, top-left origin). */
function textIn(file: string, page: number, x: number, y: number, w: number, h: number): string {
  return execFileSync('pdftotext', [
    '-f',
    String(page),
    '-l',
    String(page),
    '-x',
    String(x),
    '-y',
    String(y),
    '-W',
    String(w),
    '-H',
    String(h),
    file,
    '-',
  ])
    .toString()
    .replace(/\s+/g, ' ')
    .trim();
}

async function sizes(file: string): Promise<[number, number][]> {
  const doc = await PDFDocument.load(readFileSync(file));
  return doc.getPages().map((p) => [Math.round(p.getWidth()), Math.round(p.getHeight())]);
}

describe('layout tools (pdf-lib)', () => {
  before(async () => {
    eight = await makeTextPdf(path.join(dir, 'eight.pdf'), NAMES, { size: [300, 400] });
  });

  it('crop-pdf shrinks the crop box by the margin', async () => {
    const r = await runPdfTool(dir, 'crop-pdf', [eight], { margin: 30 });
    const doc = await PDFDocument.load(readFileSync(r.file!));
    const box = doc.getPage(0).getCropBox();
    assert.deepEqual([box.x, box.y, box.width, box.height], [30, 30, 240, 340]);
    assert.match(execFileSync('pdfinfo', [r.file!]).toString(), /Page size:\s+240 x 340 pts/);
    await assert.rejects(
      runPdfTool(dir, 'crop-pdf', [eight], { margin: 150 }),
      (e: KilnError) => e.code === 'VALIDATION_ERROR' && /page 1/.test(e.message),
    );
  });

  it('nup-pdf puts 2 pages side by side on a landscape sheet of the same paper', async () => {
    const r = await runPdfTool(dir, 'nup-pdf', [eight], { perSheet: 2 });
    assert.deepEqual(await sizes(r.file!), [
      [400, 300],
      [400, 300],
      [400, 300],
      [400, 300],
    ]);
    // Left half holds the odd page, right half the even page.
    assert.equal(textIn(r.file!, 1, 0, 0, 200, 300), 'Alpha');
    assert.equal(textIn(r.file!, 1, 200, 0, 200, 300), 'Bravo');
    assert.equal(textIn(r.file!, 4, 200, 0, 200, 300), 'Hotel');
  });

  it('nup-pdf and booklet-pdf take blank pages that have no content stream at all', async () => {
    const doc = await PDFDocument.create();
    for (let i = 0; i < 4; i++) doc.addPage([200, 300]);
    const blank = path.join(dir, 'no-contents.pdf');
    writeFileSync(blank, await doc.save());
    assert.equal((await sizes((await runPdfTool(dir, 'nup-pdf', [blank], { perSheet: 2 })).file!)).length, 2);
    assert.equal(await pageCount((await runPdfTool(dir, 'booklet-pdf', [blank], {})).file!), 2);
  });

  it('nup-pdf 4 per sheet reads left to right, top to bottom', async () => {
    const r = await runPdfTool(dir, 'nup-pdf', [eight], { perSheet: 4 });
    assert.equal(pageCount(r.file!), 2);
    assert.deepEqual(await sizes(r.file!), [
      [300, 400],
      [300, 400],
    ]);
    assert.equal(textIn(r.file!, 2, 0, 0, 150, 200), 'Echo');
    assert.equal(textIn(r.file!, 2, 150, 0, 150, 200), 'Foxtrot');
    assert.equal(textIn(r.file!, 2, 0, 200, 150, 200), 'Golf');
    assert.equal(textIn(r.file!, 2, 150, 200, 150, 200), 'Hotel');
    await assert.rejects(runPdfTool(dir, 'nup-pdf', [eight], { perSheet: 5 }), (e: KilnError) => e.code === 'VALIDATION_ERROR');
  });

  it('booklet order is saddle-stitch', () => {
    assert.deepEqual(bookletSpreads(8).spreads, [
      [8, 1],
      [2, 7],
      [6, 3],
      [4, 5],
    ]);
    assert.deepEqual(bookletSpreads(6).spreads, [
      [0, 1],
      [2, 0],
      [6, 3],
      [4, 5],
    ]);
  });

  it('booklet-pdf imposes 8 pages onto 2 sheets (4 sides) in saddle-stitch order', async () => {
    const r = await runPdfTool(dir, 'booklet-pdf', [eight], {});
    assert.deepEqual(await sizes(r.file!), [
      [600, 400],
      [600, 400],
      [600, 400],
      [600, 400],
    ]);
    const sides = [1, 2, 3, 4].map((p) => [textIn(r.file!, p, 0, 0, 300, 400), textIn(r.file!, p, 300, 0, 300, 400)]);
    assert.deepEqual(sides, [
      ['Hotel', 'Alpha'],
      ['Bravo', 'Golf'],
      ['Foxtrot', 'Charlie'],
      ['Delta', 'Echo'],
    ]);
  });

  it('booklet-pdf perSheet 4 stacks two spreads per side for cut-and-stack', async () => {
    const r = await runPdfTool(dir, 'booklet-pdf', [eight], { perSheet: 4 });
    assert.deepEqual(await sizes(r.file!), [
      [600, 800],
      [600, 800],
    ]);
    const q = (p: number) => [
      textIn(r.file!, p, 0, 0, 300, 400),
      textIn(r.file!, p, 300, 0, 300, 400),
      textIn(r.file!, p, 0, 400, 300, 400),
      textIn(r.file!, p, 300, 400, 300, 400),
    ];
    assert.deepEqual(q(1), ['Hotel', 'Alpha', 'Foxtrot', 'Charlie']);
    assert.deepEqual(q(2), ['Bravo', 'Golf', 'Delta', 'Echo']);
  });

  it('watermark-pdf draws the text on every page, translucent', async () => {
    const r = await runPdfTool(dir, 'watermark-pdf', [eight], { text: 'CONFIDENTIAL', position: 'c', rotation: 0, fontSize: 30 });
    const texts = pageTexts(r.file!);
    assert.equal(texts.length, 8);
    for (const [i, t] of texts.entries()) {
      assert.match(t, /CONFIDENTIAL/);
      assert.match(t, new RegExp(NAMES[i]!));
    }
    // Centred: the word is inside the middle band of the page.
    assert.equal(textIn(r.file!, 1, 0, 170, 300, 60), 'CONFIDENTIAL');
    const raw = execFileSync('qpdf', ['--qdf', '--object-streams=disable', r.file!, '-']).toString('latin1');
    assert.match(raw, /\/ca 0\.3/);
    await assert.rejects(runPdfTool(dir, 'watermark-pdf', [eight], { text: '' }), (e: KilnError) => e.code === 'VALIDATION_ERROR');
  });

  it('watermark-pdf draws Cyrillic through an embedded Unicode font, refuses what no font covers', async () => {
    const r = await runPdfTool(dir, 'watermark-pdf', [eight], { text: 'Конфиденциально', rotation: 0, fontSize: 20 });
    assert.match(pageTexts(r.file!)[0]!, /Конфиденциально/);
    assert.match(execFileSync('pdffonts', [r.file!]).toString(), /DejaVuSans-Bold\S*\s+CID TrueType\s+Identity-H\s+yes/);
    // Egyptian hieroglyphs: in no font installed here.
    await assert.rejects(
      runPdfTool(dir, 'watermark-pdf', [eight], { text: 'Stele \u{13000}' }),
      (e: KilnError) => e.code === 'VALIDATION_ERROR' && /\u{13000}/u.test(e.message) && /Noto Sans CJK/.test(e.message),
    );
  });

  it('watermark-pdf draws Chinese, Japanese and Korean through Noto Sans CJK, subset and extractable', async () => {
    for (const [text, face] of [
      ['機密 Confidential', 'sc'],
      ['社外秘 ですよ', 'jp'],
      ['대외비', 'kr'],
    ] as const) {
      const r = await runPdfTool(dir, 'watermark-pdf', [eight], { text, rotation: 0, fontSize: 20 });
      const words = pageTexts(r.file!)[0]!.replace(/\s+/g, ' ');
      assert.ok(words.includes(text), `${text}: the words come back out of ${words}`);
      const fonts = execFileSync('pdffonts', [r.file!]).toString();
      assert.match(fonts, new RegExp(`NotoSansCJK${face}-Bold\\S*\\s+CID Type 0C\\s+Identity-H\\s+yes\\s+\\S+\\s+yes`), fonts);
      // A subset: a few glyphs, not the 16 MB face.
      assert.ok(statSync(r.file!).size < 200_000, `${statSync(r.file!).size} bytes`);
    }
  });

  it('watermark-pdf centres a text of several lines as one block, each line centred (was off to the lower left)', async () => {
    const r = await runPdfTool(dir, 'watermark-pdf', [eight], { text: 'NORTH\nSOUTH', position: 'c', rotation: 0, fontSize: 30 });
    const bbox = execFileSync('pdftotext', ['-bbox', '-f', '1', '-l', '1', r.file!, '-']).toString();
    const box = (word: string) => {
      const m = new RegExp(`xMin="([\\d.]+)" yMin="([\\d.]+)" xMax="([\\d.]+)" yMax="([\\d.]+)">${word}<`).exec(bbox);
      assert.ok(m, `${word} in ${bbox.slice(0, 600)}`);
      const [x0, y0, x1, y1] = m.slice(1).map(Number) as [number, number, number, number];
      return { cx: (x0 + x1) / 2, cy: (y0 + y1) / 2 };
    };
    const [north, south] = [box('NORTH'), box('SOUTH')];
    for (const b of [north, south]) assert.ok(Math.abs(b.cx - 150) < 3, `centred across: ${JSON.stringify(b)}`);
    // One line above the other (36 pt apart at 30 pt), the pair centred on the page's middle (y 200 from the top).
    assert.ok(Math.abs(south.cy - north.cy - 36) < 2, `${north.cy} / ${south.cy}`);
    assert.ok(Math.abs((north.cy + south.cy) / 2 - 200) < 6, `${north.cy} / ${south.cy}`);
  });

  it('watermark-pdf top-right corner', async () => {
    const r = await runPdfTool(dir, 'watermark-pdf', [eight], { text: 'DRAFT', position: 'tr', rotation: 0, fontSize: 20 });
    assert.equal(textIn(r.file!, 1, 150, 0, 150, 60), 'DRAFT');
  });

  it('pdf-page-numbers writes the number at the chosen place, upright on rotated pages too', async () => {
    const rotated = await runPdfTool(dir, 'rotate-pdf', [eight], { angle: 90, range: '2' });
    const r = await runPdfTool(dir, 'pdf-page-numbers', [rotated.file!], { position: 'br', fontSize: 12 });
    for (let p = 1; p <= 8; p++) {
      const [w, h] = p === 2 ? [400, 300] : [300, 400];
      assert.equal(textIn(r.file!, p, w - 80, h - 60, 80, 60), String(p), `page ${p}`);
    }
  });

  it('pdf-metadata sets fields, keeps the others, and returns before/after', async () => {
    const src = await makeTextPdf(path.join(dir, 'meta.pdf'), ['x'], { title: 'Old title' });
    const r = await runPdfTool(dir, 'pdf-metadata', [src], { author: 'Ada Lovelace', subject: 'Engines', keywords: 'pdf, kiln' });
    const info = execFileSync('pdfinfo', [r.file!]).toString();
    assert.match(info, /Title:\s+Old title/);
    assert.match(info, /Author:\s+Ada Lovelace/);
    assert.match(info, /Subject:\s+Engines/);
    assert.match(info, /Keywords:\s+pdf, kiln/);
    assert.equal((r.data!.before as { title: string }).title, 'Old title');
    assert.equal((r.data!.before as { author: string | null }).author, null);
    assert.equal((r.data!.after as { author: string }).author, 'Ada Lovelace');
    const read = await runPdfTool(dir, 'pdf-metadata', [r.file!], {});
    assert.equal((read.data!.before as { subject: string }).subject, 'Engines');
  });

  it('pdf-metadata sets the XMP packet too (viewers show its title), other XMP kept, old values gone from the file', async () => {
    const doc = await PDFDocument.create();
    doc.addPage([200, 200]);
    doc.setTitle('Old title');
    const xmp = `<?xpacket begin="\uFEFF" id="W5M0MpCehiHzreSzNTczkc9d"?>
<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:pdf="http://ns.adobe.com/pdf/1.3/"
 xmlns:pdfaid="http://www.aiim.org/pdfa/ns/id/" pdf:Keywords="stale words" pdfaid:part="2" pdfaid:conformance="B">
<dc:title><rdf:Alt><rdf:li xml:lang="x-default">Old title</rdf:li></rdf:Alt></dc:title>
<dc:creator><rdf:Seq><rdf:li>Stale Author</rdf:li></rdf:Seq></dc:creator>
</rdf:Description></rdf:RDF></x:xmpmeta>
<?xpacket end="w"?>`;
    doc.catalog.set(PDFName.of('Metadata'), doc.context.register(doc.context.stream(xmp, { Type: 'Metadata', Subtype: 'XML' })));
    const src = path.join(dir, 'xmp.pdf');
    writeFileSync(src, await doc.save({ useObjectStreams: false }));
    const r = await runPdfTool(dir, 'pdf-metadata', [src], { title: 'Nouveau titre ☃', author: 'Ada <Lovelace>', keywords: '' });
    assert.equal(r.data!.xmpUpdated, true);
    const tags = JSON.parse(execFileSync('exiftool', ['-j', '-a', '-G1', '-XMP:all', '-PDF:Title', r.file!]).toString())[0];
    assert.equal(tags['XMP-dc:Title'], 'Nouveau titre ☃');
    assert.equal(tags['PDF:Title'], 'Nouveau titre ☃');
    assert.equal(tags['XMP-dc:Creator'], 'Ada <Lovelace>');
    assert.equal(tags['XMP-pdf:Keywords'], undefined, 'an empty string clears the XMP keywords');
    assert.equal(tags['XMP-pdfaid:Part'], 2, 'the rest of the packet is kept');
    assert.ok(tags['XMP-xmp:ModifyDate'], 'the packet records the change');
    // Every object uncompressed: nothing of the old packet or dictionary is left to recover.
    const flat = path.join(dir, 'xmp-flat.pdf');
    execFileSync('qpdf', ['--qdf', '--object-streams=disable', r.file!, flat]);
    assert.doesNotMatch(readFileSync(flat, 'latin1'), /Stale Author|stale words|Old title/);
  });

  it('pdf-lib tools refuse a page tree they cannot read whole as pdf-corrupt (was a stack overflow, or pages silently left out)', async () => {
    // A /Pages node that lists itself: qpdf counts past the loop, pdf-lib's own walk overflowed its stack.
    const loop = rawPdf(path.join(dir, 'pages-loop.pdf'), [
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 >>',
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>',
    ]);
    // A token qpdf reads as a string but pdf-lib cannot parse: pdf-lib loses the page, qpdf keeps it.
    const lost = rawPdf(path.join(dir, 'page-lost.pdf'), [
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 2e2 2e2] >>',
    ]);
    const corrupt = (e: KilnError) => e.code === 'UNSUPPORTED_INPUT' && e.reason === 'pdf-corrupt' && /repair-pdf/.test(e.message);
    for (const [id, settings] of [
      ['nup-pdf', {}],
      ['watermark-pdf', { text: 'X' }],
      ['pdf-page-numbers', {}],
      ['pdf-metadata', { title: 'T' }],
    ] as const) {
      await assert.rejects(runPdfTool(dir, id, [loop], settings), corrupt, `${id} on a /Pages loop`);
      await assert.rejects(runPdfTool(dir, id, [lost], settings), corrupt, `${id} on a lost page`);
    }
    // qpdf's own operations walk the tree too: the loop is named as damage, not qpdf's raw words with a temp path.
    for (const [id, settings] of [
      ['rotate-pdf', { angle: 90 }],
      ['linearize-pdf', {}],
    ] as const)
      await assert.rejects(runPdfTool(dir, id, [loop], settings), corrupt, `${id} on a /Pages loop`);
  });

  it('nup-pdf and booklet-pdf take a page whose content stream is missing from the file, as viewers and qpdf do', async () => {
    // Page 2's Contents names object 9 (of 6): null to a reader. pdf-lib's embedder failed with an
    // INTERNAL 'Expected instance of PDFStream, but got instance of undefined'.
    const damaged = rawPdf(path.join(dir, 'dangling-contents.pdf'), [
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >>',
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 5 0 R /Resources << /Font << /F1 6 0 R >> >> >>',
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents [9 0 R 5 0 R] /Resources << /Font << /F1 6 0 R >> >> >>',
      '<< /Length 39 >>\nstream\nBT /F1 12 Tf 20 100 Td (Kept text) Tj ET\nendstream',
      '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
    ]);
    for (const id of ['nup-pdf', 'booklet-pdf']) {
      const r = await runPdfTool(dir, id, [damaged]);
      assert.equal(
        pageTexts(r.file!)
          .join(' ')
          .match(/Kept text/g)?.length,
        2,
        id,
      );
    }
    // A page whose only content is missing is blank.
    const blank = rawPdf(path.join(dir, 'dangling-only.pdf'), [
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 7 0 R >>',
    ]);
    assert.equal(pageCount((await runPdfTool(dir, 'nup-pdf', [blank])).file!), 1);
  });

  it('pdf-lib tools read a page with a missing or broken media box or /Rotate as viewers do (was INTERNAL)', async () => {
    const text = '<< /Length 39 >>\nstream\nBT /F1 12 Tf 20 100 Td (Kept text) Tj ET\nendstream';
    const font = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>';
    const withPage = (name: string, entries: string) =>
      rawPdf(path.join(dir, `geometry-${name}.pdf`), [
        '<< /Type /Catalog /Pages 2 0 R >>',
        '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
        `<< /Type /Page /Parent 2 0 R /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> ${entries} >>`,
        text,
        font,
      ]);
    // Letter, as pdftoppm, pdf.js and Acrobat take a page without a usable media box; a bad /Rotate is 0.
    const files = [
      withPage('none', ''),
      withPage('dangling', '/MediaBox 9 0 R'),
      withPage('empty', '/MediaBox [0 0 0 0]'),
      withPage('rotate-name', '/MediaBox [0 0 612 792] /Rotate /Ninety'),
      withPage('cropbox-bad', '/MediaBox [0 0 612 792] /CropBox [0 0 (x) 5]'),
    ];
    const tools = [
      ['watermark-pdf', { text: 'MARK', rotation: 0 }],
      ['pdf-page-numbers', {}],
      ['nup-pdf', {}],
      ['booklet-pdf', {}],
      ['crop-pdf', { margin: 10 }],
    ] as const;
    for (const file of files)
      for (const [id, settings] of tools) {
        const r = await runPdfTool(dir, id, [file], settings).catch((e: KilnError) =>
          assert.fail(`${id} on ${path.basename(file)}: ${e.code} ${e.message}`),
        );
        assert.match(pageTexts(r.file!).join(' '), /Kept text/, `${id} on ${path.basename(file)}`);
        if (id === 'watermark-pdf') {
          assert.match(execFileSync('pdfinfo', [r.file!]).toString(), /Page size:\s+612 x 792 pts/, path.basename(file));
          // Centred on the Letter page (306, 396), upright.
          assert.equal(textIn(r.file!, 1, 236, 346, 140, 100), 'MARK', path.basename(file));
        }
      }
  });
});

/** A PDF of the given objects (1 0 obj is the catalog) with a correct cross-reference table. */
function rawPdf(file: string, objects: string[]): string {
  let out = '%PDF-1.7\n';
  const offsets = objects.map((o, i) => {
    const at = out.length;
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
    return at;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const at of offsets) out += `${String(at).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  writeFileSync(file, out);
  return file;
}
