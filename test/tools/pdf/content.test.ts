import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { PDFDocument, StandardFonts } from '@cantoo/pdf-lib';
import sharp from 'sharp';
import yauzl from 'yauzl';
import type { KilnError } from '../../../src/core/errors.js';
import { consecutiveRuns } from '../../../src/tools/pdf/document/pdf-to-image.js';
import { tempDir } from '../../helpers/fixtures.js';
import { makeTextPdf, pageTexts, runPdfTool } from './pdf-helpers.js';

const dir = tempDir('kiln-pdf-content-');

/** Raw bytes of the PDF with every stream decompressed (qpdf --qdf), for searching content streams. */
function decompressed(file: string): string {
  const out = path.join(dir, `qdf-${Math.random().toString(36).slice(2)}.pdf`);
  execFileSync('qpdf', ['--qdf', '--object-streams=disable', file, out]);
  return readFileSync(out, 'latin1');
}

/** True when the term is in the bytes as a literal string or as a hex string (either case). */
function rawContains(raw: string, term: string): boolean {
  const hex = Buffer.from(term, 'latin1').toString('hex');
  return raw.includes(term) || raw.toLowerCase().includes(hex);
}

function zipNames(file: string): Promise<{ name: string; data: Buffer }[]> {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true }, (err, zip) => {
      if (err || !zip) return reject(err);
      const out: { name: string; data: Buffer }[] = [];
      zip.on('entry', (e: yauzl.Entry) =>
        zip.openReadStream(e, (er, s) => {
          if (er || !s) return reject(er);
          const c: Buffer[] = [];
          s.on('data', (b: Buffer) => c.push(b));
          s.on('end', () => {
            out.push({ name: e.fileName, data: Buffer.concat(c) });
            zip.readEntry();
          });
        }),
      );
      zip.on('end', () => resolve(out));
      zip.readEntry();
    });
  });
}

describe('redact-pdf', () => {
  let src: string;
  before(async () => {
    src = await makeTextPdf(
      path.join(dir, 'redact.pdf'),
      ['Invoice for Jane Doe today', 'Contact: jane doe, phone 555-0100', 'Nothing here'],
      { size: [400, 300] },
    );
  });

  it('removes every match from the content streams, keeps the rest, reports matches per page', async () => {
    const rawBefore = decompressed(src);
    assert.ok(rawContains(rawBefore, 'Jane Doe') && rawContains(rawBefore, '555-0100'), 'fixture holds the terms');
    const r = await runPdfTool(dir, 'redact-pdf', [src], { terms: ['Jane Doe', '555-0100'] });
    assert.deepEqual(r.data!.pages, [
      { page: 1, matches: 1 },
      { page: 2, matches: 2 },
    ]);
    assert.equal(r.data!.matches, 3);
    const text = pageTexts(r.file!);
    const all = text.join(' ').toLowerCase();
    assert.ok(!all.includes('jane') && !all.includes('doe') && !all.includes('555'), all);
    assert.match(text[0]!, /Invoice for/);
    assert.match(text[0]!, /today/);
    assert.match(text[1]!, /Contact:/);
    assert.match(text[1]!, /phone/);
    assert.equal(text[2], 'Nothing here');
    const raw = decompressed(r.file!);
    for (const t of ['Jane', 'jane', 'Doe', '555-0100']) assert.ok(!rawContains(raw, t), `${t} still in the bytes`);
  });

  it('also removes a term drawn inside a Form XObject (an embedded page)', async () => {
    const inner = await PDFDocument.create();
    const f = await inner.embedFont(StandardFonts.Helvetica);
    inner.addPage([300, 200]).drawText('Inner Jane Doe text', { x: 10, y: 100, font: f, size: 12 });
    const outer = await PDFDocument.create();
    const [embedded] = await outer.embedPdf(await PDFDocument.load(await inner.save()), [0]);
    const page = outer.addPage([400, 300]);
    page.drawPage(embedded!, { x: 20, y: 20 });
    page.drawText('Outer Jane Doe', { x: 20, y: 270, font: await outer.embedFont(StandardFonts.Helvetica), size: 12 });
    const file = path.join(dir, 'xobject.pdf');
    writeFileSync(file, await outer.save());
    const r = await runPdfTool(dir, 'redact-pdf', [file], { terms: ['jane doe'] });
    assert.deepEqual(r.data!.pages, [{ page: 1, matches: 2 }]);
    assert.equal(pageTexts(r.file!)[0], 'Outer Inner text');
    assert.ok(!rawContains(decompressed(r.file!), 'Jane'));
  });

  it('matches a term broken across two lines, boxing only its parts', async () => {
    const doc = await PDFDocument.create();
    const f = await doc.embedFont(StandardFonts.Helvetica);
    const page = doc.addPage([400, 300]);
    page.drawText('Payable to Jane', { x: 20, y: 250, font: f, size: 12 });
    page.drawText('Doe by Friday', { x: 20, y: 234, font: f, size: 12 });
    const file = path.join(dir, 'wrapped.pdf');
    writeFileSync(file, await doc.save());
    const r = await runPdfTool(dir, 'redact-pdf', [file], { terms: ['jane  doe'] });
    assert.equal(r.data!.matches, 1);
    assert.equal(pageTexts(r.file!)[0], 'Payable to by Friday');
  });

  it('a term in a form field value is flattened into the page and redacted', async () => {
    const doc = await PDFDocument.create();
    const page = doc.addPage([400, 300]);
    page.drawText('Name field below', { x: 20, y: 250, size: 12, font: await doc.embedFont(StandardFonts.Helvetica) });
    const field = doc.getForm().createTextField('who');
    field.setText('Jane Doe');
    field.addToPage(page, { x: 20, y: 150, width: 200, height: 30 });
    const file = path.join(dir, 'field.pdf');
    writeFileSync(file, await doc.save());
    assert.match(pageTexts(file)[0]!, /Jane Doe/);
    const r = await runPdfTool(dir, 'redact-pdf', [file], { terms: ['jane doe'] });
    assert.equal(r.data!.flattenedForms, true);
    assert.deepEqual(r.data!.pages, [{ page: 1, matches: 1 }]);
    assert.equal(pageTexts(r.file!)[0], 'Name field below');
    const raw = decompressed(r.file!);
    assert.ok(!rawContains(raw, 'Jane') && !/\/AcroForm/.test(raw));
  });

  it('caseSensitive only matches the exact case', async () => {
    const r = await runPdfTool(dir, 'redact-pdf', [src], { terms: ['jane doe'], caseSensitive: true });
    assert.deepEqual(r.data!.pages, [{ page: 2, matches: 1 }]);
    const text = pageTexts(r.file!);
    assert.match(text[0]!, /Jane Doe/);
    assert.ok(!/jane doe/.test(text[1]!));
    await assert.rejects(runPdfTool(dir, 'redact-pdf', [src], { terms: [] }), (e: KilnError) => e.code === 'VALIDATION_ERROR');
  });
});

describe('flatten-pdf', () => {
  it('bakes filled form fields into the page and removes the form', async () => {
    const doc = await PDFDocument.create();
    const page = doc.addPage([400, 300]);
    page.drawText('Application form', { x: 20, y: 260, size: 14, font: await doc.embedFont(StandardFonts.Helvetica) });
    const form = doc.getForm();
    const name = form.createTextField('applicant');
    name.setText('Grace Hopper');
    name.addToPage(page, { x: 20, y: 150, width: 200, height: 30 });
    const box = form.createCheckBox('agree');
    box.addToPage(page, { x: 20, y: 100, width: 20, height: 20 });
    box.check();
    const file = path.join(dir, 'form.pdf');
    writeFileSync(file, await doc.save());
    assert.match(decompressed(file), /\/AcroForm/);

    const r = await runPdfTool(dir, 'flatten-pdf', [file]);
    const out = await PDFDocument.load(readFileSync(r.file!));
    assert.equal(out.getForm().getFields().length, 0);
    const raw = decompressed(r.file!);
    assert.ok(!/\/Annots/.test(raw), 'no annotations left');
    assert.ok(!/\/Subtype \/Widget/.test(raw));
    const text = pageTexts(r.file!)[0]!;
    assert.match(text, /Grace Hopper/);
    assert.match(text, /Application form/);
  });
});

describe('pdf-to-text', () => {
  it('extracts the text of every page in order, form-feed separated', async () => {
    const src = await makeTextPdf(path.join(dir, 'text.pdf'), ['First page words', 'Zweite Seite: Grüße']);
    const r = await runPdfTool(dir, 'pdf-to-text', [src]);
    assert.match(r.output!.contentType, /^text\/plain/);
    const txt = readFileSync(r.file!, 'utf8');
    const pages = txt.split('\f').map((p) => p.trim());
    assert.equal(pages[0], 'First page words');
    assert.equal(pages[1], 'Zweite Seite: Grüße');
  });
});

describe('pdf-to-image', () => {
  let three: string;
  before(async () => {
    three = await makeTextPdf(path.join(dir, 'three.pdf'), ['One', 'Two', 'Three'], { size: [288, 432] }); // 4 × 6 inches
  });

  it('renders one page at the requested dpi as one image', async () => {
    const r = await runPdfTool(dir, 'pdf-to-image', [three], { pages: '2', dpi: 100, format: 'jpg', quality: 70 });
    const meta = await sharp(r.file!).metadata();
    assert.deepEqual([meta.format, meta.width, meta.height], ['jpeg', 400, 600]);
  });

  it('several pages come back as a ZIP of images of the right size', async () => {
    const r = await runPdfTool(dir, 'pdf-to-image', [three], { pages: '1,z', dpi: 36, format: 'webp' });
    assert.equal(r.output!.contentType, 'application/zip');
    const entries = (await zipNames(r.file!)).sort((a, b) => a.name.localeCompare(b.name));
    assert.deepEqual(
      entries.map((e) => e.name),
      ['three-page-1.webp', 'three-page-3.webp'],
    );
    for (const e of entries) {
      const m = await sharp(e.data).metadata();
      assert.deepEqual([m.format, m.width, m.height], ['webp', 144, 216]);
    }
  });

  it('renders many pages in runs, each image from its own page, in any order asked', async () => {
    // 45 pages, page n n+10 points wide: each image's width says which page it came from.
    const doc = await PDFDocument.create();
    for (let n = 1; n <= 45; n++) doc.addPage([n + 10, 40]);
    const many = path.join(dir, 'many.pdf');
    writeFileSync(many, await doc.save());
    const r = await runPdfTool(dir, 'pdf-to-image', [many], { pages: '40-45,3,1-25,2', dpi: 72 });
    const entries = await zipNames(r.file!);
    const widths = new Map<string, number>();
    for (const e of entries) widths.set(e.name, (await sharp(e.data).metadata()).width!);
    // The pages once each (a repeated page is one image), named after their number.
    const asked = [...new Set([40, 41, 42, 43, 44, 45, 3, ...Array.from({ length: 25 }, (_, i) => i + 1), 2])];
    assert.equal(widths.size, asked.length);
    for (const n of asked) assert.equal(widths.get(`many-page-${String(n).padStart(2, '0')}.png`), n + 10, `page ${n}`);
    assert.deepEqual(consecutiveRuns([40, 41, 42, 43, 44, 45, 3, 1, 2, 4, 5], 4), [
      [40, 43],
      [44, 45],
      [3, 3],
      [1, 2],
      [4, 5],
    ]);
  });

  it('png by default, all pages, and the pixels show the page (white with red text)', async () => {
    const r = await runPdfTool(dir, 'pdf-to-image', [three], { dpi: 36 });
    const entries = await zipNames(r.file!);
    assert.equal(entries.length, 3);
    const stats = await sharp(entries[0]!.data).stats();
    assert.equal(stats.channels[1]!.max, 255);
    assert.ok(stats.channels[1]!.min < 100, 'red text lowers green');
  });

  it('encodes every catalog format at the requested size', async () => {
    for (const format of ['jpg', 'webp', 'avif', 'tiff', 'gif', 'heif', 'heic', 'jxl']) {
      const r = await runPdfTool(dir, 'pdf-to-image', [three], { pages: 'r1', dpi: 36, format });
      assert.ok(r.file!.endsWith(`.${format}`), r.file);
      // sharp's prebuilt libvips reads neither HEVC nor JPEG XL; the vips CLI reads both, once the
      // VIPSHOME that loading sharp puts into process.env is taken out again (it hides the CLI's modules).
      const { VIPSHOME: _hidden, ...env } = process.env;
      // Each field asked for by name: a "WxH" looked for in the whole line matched digits in the random
      // temp directory's name once (…7x5…).
      const size = ['heic', 'jxl'].includes(format)
        ? ['width', 'height'].map((f) => Number(execFileSync('vipsheader', ['-f', f, r.file!], { env }).toString()))
        : await sharp(r.file!)
            .metadata()
            .then((m) => [m.width, m.height]);
      assert.deepEqual(size, [144, 216], format);
    }
  });

  it('renders what a viewer shows of a page whose crop box is smaller than its media box', async () => {
    // 200×200 pt media box, its left half black; the crop box is the white right half, 100×200 pt.
    const doc = await PDFDocument.create();
    const page = doc.addPage([200, 200]);
    page.drawRectangle({ x: 0, y: 0, width: 100, height: 200 });
    page.setCropBox(100, 0, 100, 200);
    const cropped = path.join(dir, 'cropped.pdf');
    writeFileSync(cropped, await doc.save());
    const r = await runPdfTool(dir, 'pdf-to-image', [cropped], { dpi: 72 });
    const meta = await sharp(r.file!).metadata();
    assert.deepEqual([meta.width, meta.height], [100, 200]);
    const stats = await sharp(r.file!).stats();
    assert.equal(stats.channels[0]!.min, 255, 'nothing of the black half outside the crop box');
  });

  it('a TIFF records the dpi it was rendered at (sharp wrote 25.4 dpi: a 4-inch page printed 31 inches wide)', async () => {
    const r = await runPdfTool(dir, 'pdf-to-image', [three], { pages: '1', dpi: 200, format: 'tiff' });
    const tags = JSON.parse(
      execFileSync('exiftool', ['-j', '-n', '-XResolution', '-YResolution', '-ResolutionUnit', r.file!]).toString(),
    )[0];
    assert.deepEqual([tags.XResolution, tags.YResolution, tags.ResolutionUnit], [200, 200, 2], 'inches (unit 2)');
    assert.equal((await sharp(r.file!).metadata()).width, 800, '4 inches at 200 dpi');
  });

  it('refuses a raster over the pixel limit and a page out of range', async () => {
    const big = await makeTextPdf(path.join(dir, 'big.pdf'), ['Big'], { size: [2000, 2000] });
    await assert.rejects(runPdfTool(dir, 'pdf-to-image', [big], { dpi: 2400 }), (e: KilnError) => {
      assert.equal(e.code, 'LIMIT_EXCEEDED', e.message);
      // 2000 pt at 2400 dpi is 66667 px a side: 4444 MP; at most 360 dpi fits 100 MP.
      assert.match(
        e.message,
        /^The rendering of page 1 at 2400 dpi would be 66667×66667 pixels \(4444 MP\), above the limit of 100 MP \(KILN_MAX_PIXELS=100000000\)\. Use dpi 360 or less\.$/,
      );
      assert.deepEqual(e.details, [{ path: 'dpi', message: 'at most 360 for page 1' }]);
      return true;
    });
    await assert.rejects(
      runPdfTool(dir, 'pdf-to-image', [three], { pages: '4' }),
      (e: KilnError) => e.code === 'VALIDATION_ERROR' && /3 pages/.test(e.message),
    );
    await assert.rejects(runPdfTool(dir, 'pdf-to-image', [three], { dpi: 20 }), (e: KilnError) => e.code === 'VALIDATION_ERROR');
  });
});
