/**
 * ocr-pdf: a scanned PDF made here (page images of rendered text) becomes searchable — pdftotext
 * finds the words at the places they are drawn — while the page images stay byte for byte the same
 * and the pages look identical; page selection; the 50-page limit and Korean with 'fast' refused
 * before queueing.
 */
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { PDFDocument } from '@cantoo/pdf-lib';
import sharp from 'sharp';
import { exec } from '../../../src/core/process.js';
import type { KilnError } from '../../../src/core/errors.js';
import { getTool } from '../../../src/tools/index.js';
import { validateRequest } from '../../../src/tools/run-tool.js';
import { tempDir } from '../../helpers/fixtures.js';
import { runMedia } from '../../helpers/media.js';
import { charAccuracy, installTestRuntime, paragraph, renderText } from '../../helpers/ocr.js';

const dir = tempDir('kiln-ocr-pdf-');
const dataDir = path.join(dir, 'data');
const P1 = ['Searchable text layers place words', 'exactly where the scan shows them.', 'Kiln reads pages at three hundred dpi.'];
const P2 = ['A second page with other words', 'about stoneware and porcelain.'];

/** A PDF whose pages are only images: PNG at 200 dpi placed 1 inch from the top left (`turn`: scanned turned clockwise). */
async function scannedPdf(file: string, pages: string[][], turn?: 90 | 270): Promise<string> {
  const doc = await PDFDocument.create();
  for (const [i, lines] of pages.entries()) {
    const png = await renderText(
      path.join(dir, `p${i}.png`),
      1400,
      120 + lines.length * 80,
      paragraph(lines, { size: 44, y: 90, lead: 1.8 }),
    );
    if (turn)
      await sharp(png)
        .rotate(turn)
        .toFile(path.join(dir, `p${i}-turned.png`));
    const img = await doc.embedPng(await readFile(turn ? path.join(dir, `p${i}-turned.png`) : png));
    const page = doc.addPage([612, 792]);
    const w = (img.width * 72) / 200;
    const h = (img.height * 72) / 200;
    page.drawImage(img, { x: 72, y: 792 - 72 - h, width: w, height: h });
  }
  await writeFile(file, await doc.save());
  return file;
}

const text = async (pdf: string, page: number) => (await exec('pdftotext', ['-f', String(page), '-l', String(page), pdf, '-'])).stdout;
const render = async (pdf: string, page: number) =>
  (await exec('pdftoppm', ['-r', '40', '-f', String(page), '-l', String(page), '-gray', '-singlefile', pdf], { binary: true }))
    .stdoutBuffer;

describe('ocr-pdf', { timeout: 600_000 }, () => {
  let scan: string;
  before(async () => {
    scan = await scannedPdf(path.join(dir, 'scan.pdf'), [P1, P2, P1]);
    await installTestRuntime(dataDir);
  });

  for (const quality of ['fast', 'balanced'] as const) {
    it(`writes a searchable PDF at '${quality}' with the text at the right places and the pages untouched`, async (t) => {
      const r = await runMedia(dataDir, 'ocr-pdf', [scan], { quality, pages: '1-2' });
      const data = r.data as { pages: { page: number; text: string }[]; provenance: { actualQuality: string } };
      assert.deepEqual(
        data.pages.map((p) => p.page),
        [1, 2],
      );
      assert.equal(data.provenance.actualQuality, quality);
      const acc1 = charAccuracy(P1.join('\n'), await text(r.path, 1));
      const acc2 = charAccuracy(P2.join('\n'), await text(r.path, 2));
      t.diagnostic(`${quality}: pdftotext of the OCR layer, page 1 ${(acc1 * 100).toFixed(1)} %, page 2 ${(acc2 * 100).toFixed(1)} %`);
      assert.ok(acc1 >= 0.95 && acc2 >= 0.95, `${acc1} ${acc2}`);
      assert.equal((await text(r.path, 3)).trim(), '', 'page 3 was not selected');
      // "Searchable" sits where the scan shows it: 1 inch from the left, near the top of the image.
      const bbox = (await exec('pdftotext', ['-bbox', '-f', '1', '-l', '1', r.path, '-'])).stdout;
      const m = /<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">Searchable<\/word>/.exec(bbox);
      assert.ok(m, bbox.slice(0, 500));
      const [x0, y0, x1] = [Number(m[1]), Number(m[2]), Number(m[3])];
      // Drawn at x = 72 + 30·72/200, baseline 72 + 90·72/200 = 104.4, 44 px at 200 dpi ≈ 15.8 pt (capitals from about 93).
      assert.ok(Math.abs(x0 - 82.8) < 6, `x ${x0}`);
      assert.ok(y0 > 82 && y0 < 106, `y ${y0}`);
      assert.ok(x1 - x0 > 60 && x1 - x0 < 110, `width ${x1 - x0}`);
      // Images untouched, pages look the same.
      const list = async (f: string) =>
        (await exec('pdfimages', ['-list', f])).stdout
          .split('\n')
          .slice(2)
          .map((l) => l.split(/\s+/).slice(0, 12).join(' '));
      assert.deepEqual(await list(r.path), await list(scan));
      for (const p of [1, 2, 3]) assert.ok((await render(r.path, p)).equals(await render(scan, p)), `page ${p} looks different`);
    });
  }

  // The layer said each word level, sized to its box: a page scanned sideways extracted as
  // "over The|the||lazy||quick||b|r|o|w|n" (tall boxes, level text squeezed into them), and a line's
  // words, each at its own height, came apart ("over the||lazy dog"). Words now run the way the scan
  // shows them, at their line's size on its baseline.
  for (const quality of ['fast', 'balanced'] as const) {
    it(`writes the text layer of a page scanned sideways along its lines at '${quality}'`, async () => {
      for (const turn of [90, 270] as const) {
        const sideways = await scannedPdf(path.join(dir, `sideways-${turn}.pdf`), [P1], turn);
        const r = await runMedia(dataDir, 'ocr-pdf', [sideways], { quality });
        const data = r.data as { pages: { text: string }[] };
        assert.ok(charAccuracy(P1.join('\n'), data.pages[0]!.text) >= 0.95, `${turn}: ${JSON.stringify(data.pages[0]!.text)}`);
        // Every line extracted whole (pdftotext puts lines running up the page in an order of its own; mutool keeps the order).
        const lines = (await text(r.path, 1))
          .split('\n')
          .map((l) => l.trim())
          .filter(Boolean);
        assert.equal(lines.length, P1.length, JSON.stringify(lines));
        for (const want of P1)
          assert.ok(
            lines.some((l) => charAccuracy(want, l) >= 0.9),
            `${turn}: ${want} in ${JSON.stringify(lines)}`,
          );
        const bbox = (await exec('pdftotext', ['-bbox', r.path, '-'])).stdout;
        const m = /<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">Searchable<\/word>/.exec(bbox);
        assert.ok(m, bbox.slice(0, 500));
        const [x0, y0, x1, y1] = m.slice(1).map(Number) as [number, number, number, number];
        // The image (1400 × 360 px at 200 dpi, turned: 129.6 × 504 pt at 72, 72) holds the word in a
        // tall box at its right edge (turned clockwise, read downwards) or its left (read upwards).
        assert.ok(y1 - y0 > 3 * (x1 - x0), `${turn}: ${m[0]}`);
        if (turn === 90) assert.ok(x0 > 150 && x1 < 202 && Math.abs(y0 - 82.8) < 6, `${turn}: ${m[0]}`);
        else assert.ok(x0 > 72 && x1 < 124 && Math.abs(y1 - (72 + 504 - 10.8)) < 6, `${turn}: ${m[0]}`);
      }
    });
  }

  it("keeps an owner-restricted scan's encryption and permissions (it is read from a decrypted copy)", async () => {
    const restricted = path.join(dir, 'restricted-scan.pdf');
    await exec('qpdf', ['--encrypt', '', 'boss', '256', '--print=none', '--extract=n', '--', scan, restricted]);
    const r = await runMedia(dataDir, 'ocr-pdf', [restricted], { quality: 'fast', pages: '2' });
    const enc = (await exec('qpdf', ['--password=boss', '--show-encryption', r.path])).stdout;
    assert.match(enc, /R = 6/);
    assert.match(enc, /Supplied password is owner password/);
    assert.match(enc, /print high resolution: not allowed/);
    assert.ok(charAccuracy(P2.join('\n'), await text(r.path, 2)) >= 0.9, 'the text layer is there');
  });

  it('refuses more than 50 pages and Korean with fast before queueing', async () => {
    const tool = getTool('ocr-pdf');
    const big = await PDFDocument.create();
    for (let i = 0; i < 51; i++) big.addPage([200, 200]);
    const bigFile = path.join(dir, 'big.pdf');
    await writeFile(bigFile, await big.save());
    const inputs = { files: [{ path: bigFile, name: 'big.pdf', size: 1 }], extra: {} };
    assert.throws(
      () => validateRequest(tool, inputs, { pages: '1-51' }),
      (e: KilnError) => e.code === 'LIMIT_EXCEEDED',
    );
    const all = validateRequest(tool, inputs, { quality: 'fast' });
    await assert.rejects(
      tool.preflight!(all as never, { dataDir, inputs }),
      (e: KilnError) => e.code === 'LIMIT_EXCEEDED' && e.reason === 'too-many-pages',
    );
    const fifty = validateRequest(tool, inputs, { quality: 'fast', pages: '2-51' });
    await tool.preflight!(fifty as never, { dataDir, inputs });
    assert.throws(
      () => validateRequest(tool, inputs, { quality: 'fast', language: 'ko' }),
      (e: KilnError) => e.code === 'FEATURE_INCOMPATIBLE' && e.reason === 'fast-korean-unsupported',
    );
    assert.throws(
      () => validateRequest(tool, inputs, { pages: '3-1' }),
      (e: KilnError) => e.code === 'VALIDATION_ERROR',
    );
  });
});
