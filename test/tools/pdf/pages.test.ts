import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it, before } from 'node:test';
import { PDFDocument } from '@cantoo/pdf-lib';
import yauzl from 'yauzl';
import type { KilnError } from '../../../src/core/errors.js';
import { resolveRange } from '../../../src/engines/qpdf.js';
import { tempDir } from '../../helpers/fixtures.js';
import { makeTextPdf, numbered, pageCount, pageTexts, runPdfTool } from './pdf-helpers.js';

const dir = tempDir('kiln-pdf-pages-');
let six: string;

function zipEntries(file: string): Promise<{ name: string; data: Buffer }[]> {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true }, (err, zip) => {
      if (err || !zip) return reject(err);
      const out: { name: string; data: Buffer }[] = [];
      zip.on('entry', (e: yauzl.Entry) => {
        zip.openReadStream(e, (er, s) => {
          if (er || !s) return reject(er);
          const chunks: Buffer[] = [];
          s.on('data', (c: Buffer) => chunks.push(c));
          s.on('end', () => {
            out.push({ name: e.fileName, data: Buffer.concat(chunks) });
            zip.readEntry();
          });
        });
      });
      zip.on('end', () => resolve(out));
      zip.readEntry();
    });
  });
}

describe('qpdf page ranges', () => {
  it('resolves qpdf syntax against the page count', () => {
    assert.deepEqual(resolveRange('1-3,z', 6), [1, 2, 3, 6]);
    assert.deepEqual(resolveRange('r1', 6), [6]);
    // 'last' is what people type for qpdf's z, in any case, with spaces.
    assert.deepEqual(resolveRange('1, Last', 6), [1, 6]);
    assert.deepEqual(resolveRange('r3-last', 6), [4, 5, 6]);
    assert.deepEqual(resolveRange('last-4', 6), [6, 5, 4]);
    assert.deepEqual(resolveRange('r3-r1', 6), [4, 5, 6]);
    assert.deepEqual(resolveRange('z-1', 3), [3, 2, 1]);
    assert.deepEqual(resolveRange('1-z:odd', 6), [1, 3, 5]);
    assert.deepEqual(resolveRange('1-z:even', 6), [2, 4, 6]);
    assert.deepEqual(resolveRange('2-6:odd', 6), [2, 4, 6]);
    // qpdf applies a trailing :odd/:even to the whole list, by position.
    assert.deepEqual(resolveRange('5,1-4:even', 6), [1, 3]);
    assert.throws(
      () => resolveRange('1-3:odd,5', 6),
      (e: KilnError) => e.code === 'VALIDATION_ERROR',
    );
    assert.throws(
      () => resolveRange('1-9', 6),
      (e: KilnError) => e.code === 'VALIDATION_ERROR' && /has 6 pages/.test(e.message),
    );
    assert.throws(
      () => resolveRange('0', 6),
      (e: KilnError) => e.code === 'VALIDATION_ERROR',
    );
    assert.throws(
      () => resolveRange('1;2', 6),
      (e: KilnError) => e.code === 'VALIDATION_ERROR',
    );
  });

  it('a page selection repeating pages is bounded (2000 characters of "1-z," made millions of pages)', async () => {
    // Twice the document, or 1000 pages in all, may be listed; a modifier counts after it picked.
    assert.equal(resolveRange('1-z,1-z', 3000).length, 6000);
    assert.equal(resolveRange(Array(250).fill('1-z').join(','), 4).length, 1000);
    assert.equal(resolveRange(`${Array(500).fill('1-z').join(',')}:odd`, 4).length, 1000);
    for (const [range, pages] of [
      ['1-z,1-z,1', 3000],
      [Array(251).fill('1-z').join(','), 4],
      [Array(500).fill('1-z').join(','), 1_000_000],
    ] as const)
      assert.throws(
        () => resolveRange(range, pages),
        (e: KilnError) => e.code === 'LIMIT_EXCEEDED' && /more than \d+ pages/.test(e.message) && e.message.length < 300,
      );
    // Through a tool: refused before qpdf runs (a 150-fold 1-z of a 3000-page PDF took 48 s and 2 GB).
    const three = await makeTextPdf(path.join(dir, 'three.pdf'), numbered(3));
    const r = runPdfTool(dir, 'organize-pdf', [three], { order: Array(400).fill('1-z').join(',') });
    await assert.rejects(r, (e: KilnError) => e.code === 'LIMIT_EXCEEDED');
  });
});

describe('page tools', () => {
  before(async () => {
    six = await makeTextPdf(path.join(dir, 'six.pdf'), numbered(6));
  });

  it('merge-pdf joins files in upload order', async () => {
    const a = await makeTextPdf(path.join(dir, 'a.pdf'), ['Alpha one', 'Alpha two']);
    const b = await makeTextPdf(path.join(dir, 'b.pdf'), ['Bravo one'], { size: [500, 200] });
    const r = await runPdfTool(dir, 'merge-pdf', [b, a]);
    assert.deepEqual(pageTexts(r.file!), ['Bravo one', 'Alpha one', 'Alpha two']);
    assert.equal(r.data!.pages, 3);
    await assert.rejects(runPdfTool(dir, 'merge-pdf', [a]), (e: KilnError) => e.code === 'VALIDATION_ERROR');
  });

  it('merge-pdf keeps the title, author… of the first file that has each (the merged file had none)', async () => {
    const cover = await makeTextPdf(path.join(dir, 'cover.pdf'), ['Cover'], { title: 'Rapport — 年度报告 🎉' });
    const body = await PDFDocument.load(readFileSync(await makeTextPdf(path.join(dir, 'body.pdf'), ['Body'], { title: 'Chapter 2' })));
    body.setAuthor('Zoë Ångström');
    body.setKeywords(['annual, report']);
    const bodyFile = path.join(dir, 'body-info.pdf');
    writeFileSync(bodyFile, await body.save());
    const r = await runPdfTool(dir, 'merge-pdf', [cover, bodyFile]);
    assert.deepEqual(pageTexts(r.file!), ['Cover', 'Body']);
    const info = execFileSync('pdfinfo', [r.file!]).toString();
    assert.match(info, /Title:\s+Rapport — 年度报告 🎉\n/);
    assert.match(info, /Author:\s+Zoë Ångström\n/);
    assert.match(info, /Keywords:\s+annual, report\n/);
  });

  it('split-pdf range keeps the selected pages in order', async () => {
    const r = await runPdfTool(dir, 'split-pdf', [six], { range: '5-z,1' });
    assert.deepEqual(pageTexts(r.file!), ['Page 5', 'Page 6', 'Page 1']);
    await assert.rejects(runPdfTool(dir, 'split-pdf', [six], { mode: 'range' }), (e: KilnError) => e.code === 'VALIDATION_ERROR');
  });

  it('split-pdf every N gives a ZIP of part-N.pdf', async () => {
    const r = await runPdfTool(dir, 'split-pdf', [six], { mode: 'every', everyN: 4 });
    assert.equal(r.output!.contentType, 'application/zip');
    const entries = await zipEntries(r.file!);
    assert.deepEqual(entries.map((e) => e.name).sort(), ['part-1.pdf', 'part-2.pdf']);
    const docs = await Promise.all(entries.sort((x, y) => x.name.localeCompare(y.name)).map((e) => PDFDocument.load(e.data)));
    assert.deepEqual(
      docs.map((d) => d.getPageCount()),
      [4, 2],
    );
    const one = await runPdfTool(dir, 'split-pdf', [six], { mode: 'every', everyN: 10 });
    assert.deepEqual(
      (await zipEntries(one.file!)).map((e) => e.name),
      ['part-1.pdf'],
    );
  });

  it('split-pdf every N: each part keeps the title, author, subject and keywords (qpdf --split-pages wrote none)', async () => {
    const src = await PDFDocument.load(
      readFileSync(await makeTextPdf(path.join(dir, 'titled.pdf'), numbered(3), { title: 'Rapport — 年度报告 🎉' })),
    );
    src.setAuthor('Zoë Ångström');
    src.setKeywords(['annual, report']);
    const file = path.join(dir, 'titled-info.pdf');
    writeFileSync(file, await src.save());
    const r = await runPdfTool(dir, 'split-pdf', [file], { mode: 'every', everyN: 2 });
    const entries = await zipEntries(r.file!);
    assert.equal(entries.length, 2);
    for (const e of entries) {
      const part = path.join(dir, `titled-${e.name}`);
      writeFileSync(part, e.data);
      const info = execFileSync('pdfinfo', [part]).toString();
      assert.match(info, /Title:\s+Rapport — 年度报告 🎉\n/, e.name);
      assert.match(info, /Author:\s+Zoë Ångström\n/, e.name);
      assert.match(info, /Keywords:\s+annual, report\n/, e.name);
    }
    assert.deepEqual(entries.map((e) => e.name).sort(), ['part-1.pdf', 'part-2.pdf']);
  });

  it('extract-pages understands r1, z and odd exactly as qpdf does', async () => {
    const r = await runPdfTool(dir, 'extract-pages', [six], { range: 'r1,1-z:odd' });
    assert.deepEqual(pageTexts(r.file!), ['Page 6', 'Page 2', 'Page 4', 'Page 6']);
    assert.deepEqual(r.data!.pages, [6, 2, 4, 6]);
  });

  it('extract-pages out of range names the page count', async () => {
    await assert.rejects(
      runPdfTool(dir, 'extract-pages', [six], { range: '2-9' }),
      (e: KilnError) => e.code === 'VALIDATION_ERROR' && /6 pages/.test(e.message),
    );
  });

  it('a page selection of only spaces is an empty setting, not every page (extract-pages kept the whole PDF)', async () => {
    for (const [id, field] of [
      ['extract-pages', 'range'],
      ['remove-pages', 'pages'],
      ['organize-pdf', 'order'],
    ] as const) {
      await assert.rejects(
        runPdfTool(dir, id, [six], { [field]: ' \t ' }),
        (e: KilnError) =>
          e.code === 'VALIDATION_ERROR' && (e.details as { path: string }[] | undefined)?.[0]?.path === field && /empty/.test(e.message),
        id,
      );
    }
    // Spaces around a real selection still work.
    assert.deepEqual(pageTexts((await runPdfTool(dir, 'extract-pages', [six], { range: ' 2 , 5 ' })).file!), ['Page 2', 'Page 5']);
  });

  it('remove-pages drops pages and refuses to remove all', async () => {
    const r = await runPdfTool(dir, 'remove-pages', [six], { pages: '2,4-5' });
    assert.deepEqual(pageTexts(r.file!), ['Page 1', 'Page 3', 'Page 6']);
    await assert.rejects(runPdfTool(dir, 'remove-pages', [six], { pages: '1-z' }), (e: KilnError) => e.code === 'VALIDATION_ERROR');
  });

  it('organize-pdf reorders', async () => {
    const r = await runPdfTool(dir, 'organize-pdf', [six], { order: '3,1,2,z-4' });
    assert.deepEqual(pageTexts(r.file!), ['Page 3', 'Page 1', 'Page 2', 'Page 6', 'Page 5', 'Page 4']);
  });

  it('rotate-pdf sets /Rotate on the selected pages only', async () => {
    const r = await runPdfTool(dir, 'rotate-pdf', [six], { angle: 270, range: '2,z' });
    const doc = await PDFDocument.load(readFileSync(r.file!));
    assert.deepEqual(
      doc.getPages().map((p) => p.getRotation().angle),
      [0, 270, 0, 0, 0, 270],
    );
    const all = await runPdfTool(dir, 'rotate-pdf', [r.file!], {});
    const doc2 = await PDFDocument.load(readFileSync(all.file!));
    assert.deepEqual(
      doc2.getPages().map((p) => p.getRotation().angle % 360),
      [90, 0, 90, 90, 90, 0],
    );
    await assert.rejects(runPdfTool(dir, 'rotate-pdf', [six], { angle: 45 }), (e: KilnError) => e.code === 'VALIDATION_ERROR');
    assert.equal(pageCount(all.file!), 6);
  });
});

describe('page selections reach qpdf resolved', () => {
  it("rotate-pdf takes 'last' (qpdf alone would not) and rotates only the pages named", async () => {
    const three = await makeTextPdf(path.join(dir, 'rot-three.pdf'), numbered(3));
    const r = await runPdfTool(dir, 'rotate-pdf', [three], { angle: 90, range: ' 1 , last ' });
    const rot = execFileSync('pdfinfo', ['-f', '1', '-l', '3', r.file!])
      .toString()
      .split('\n')
      .flatMap((l) => /^Page\s+\d+ rot:\s+(\d+)/.exec(l)?.[1] ?? [])
      .map(Number);
    assert.deepEqual(rot, [90, 0, 90]);
    assert.deepEqual(r.data?.rotatedPages, [1, 3]);
  });
});
