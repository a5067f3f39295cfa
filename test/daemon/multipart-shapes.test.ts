/**
 * Request shapes beyond "one file + settings" over real HTTP, as catalog.md names the fields: indexed
 * extra files with a JSON form field (sign-pdf: sig0, sig1, placements), a second `file` part (compare),
 * a named second file (watermark-image), repeated `file` parts (merge-pdf).
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PDFDocument, StandardFonts } from '@cantoo/pdf-lib';
import sharp from 'sharp';
import { exec } from '../../src/core/process.js';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { filePart, form, startServer, type TestServer } from '../helpers/server.js';

const dir = tempDir();

async function pdf(name: string, pages: number): Promise<string> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 0; i < pages; i++) doc.addPage([300, 400]).drawText(`${name} page ${i + 1}`, { x: 20, y: 350, size: 14, font });
  const p = path.join(dir, `${name}.pdf`);
  await writeFile(p, await doc.save());
  return p;
}

describe('multipart request shapes', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(() => s.close());

  async function run(route: string, fd: FormData): Promise<{ status: number; json: any; file?: Buffer }> {
    const res = await fetch(s.url + route, { method: 'POST', headers: { authorization: `Bearer ${s.token}` }, body: fd });
    const json = await res.json();
    if (res.status !== 200) return { status: res.status, json };
    const dl = await fetch(s.url + json.downloadUrl, { headers: { authorization: `Bearer ${s.token}` } });
    return { status: res.status, json, file: Buffer.from(await dl.arrayBuffer()) };
  }

  it('sign-pdf takes sig0, sig1 and placements as form fields', async () => {
    const doc = await pdf('contract', 2);
    const sig0 = await makeImage(dir, 'sig0.png', 120, 40, { alpha: true });
    const sig1 = await makeImage(dir, 'sig1.png', 80, 80);
    const placements = JSON.stringify([
      { sig: 0, page: 0, x: 0.5, y: 0.8, w: 0.4, h: 0.1 },
      { sig: 1, page: 1, x: 0.1, y: 0.1, w: 0.2, h: 0.2 },
    ]);
    const r = await run(
      '/api/v1/tools/pdf/sign-pdf',
      await form({ file: await filePart(doc), sig0: await filePart(sig0), sig1: await filePart(sig1), placements }),
    );
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const out = path.join(dir, 'signed.pdf');
    await writeFile(out, r.file!);
    const list = await exec('pdfimages', ['-list', out]);
    const rows = list.stdout
      .trim()
      .split('\n')
      .slice(2)
      .filter((l) => /\bimage\b/.test(l));
    assert.deepEqual([...new Set(rows.map((l) => l.trim().split(/\s+/)[0]))].sort(), ['1', '2'], 'one stamp on each page');
  });

  it('sign-pdf without its signature image answers 400 naming the field', async () => {
    const doc = await pdf('nosig', 1);
    const r = await run(
      '/api/v1/tools/pdf/sign-pdf',
      await form({ file: await filePart(doc), placements: '[{"sig":0,"page":0,"x":0,"y":0,"w":0.5,"h":0.5}]' }),
    );
    assert.equal(r.status, 400);
    assert.equal(r.json.error.code, 'VALIDATION_ERROR');
    assert.match(r.json.error.message, /sig/);
  });

  it('compare takes the target as a second file part and reports the differing pixels', async () => {
    const a = await makeImage(dir, 'a.png', 40, 20);
    const bPath = path.join(dir, 'b.png');
    // Same picture with a 5x5 white square: exactly 25 pixels differ.
    await sharp(a)
      .composite([{ input: { create: { width: 5, height: 5, channels: 3, background: '#ffffff' } }, left: 2, top: 2 }])
      .toFile(bPath);
    const r = await run(
      '/api/v1/tools/image/compare',
      await form({ file: [await filePart(a), await filePart(bPath)], settings: JSON.stringify({ mode: 'diff' }) }),
    );
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const text = JSON.stringify(r.json.data);
    assert.match(text, /25\b/, `25 differing pixels in ${text}`);
  });

  it('watermark-image takes its logo in the watermark field', async () => {
    const base = await makeImage(dir, 'base.png', 200, 100);
    const logo = await makeImage(dir, 'logo.png', 50, 50);
    const r = await run(
      '/api/v1/tools/image/watermark-image',
      await form({
        file: await filePart(base),
        watermark: await filePart(logo),
        settings: '{"opacity":100,"position":"center","scale":25}',
      }),
    );
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const m = await sharp(r.file!).metadata();
    assert.deepEqual([m.width, m.height], [200, 100]);
  });

  it('merge-pdf takes repeated file parts in order', async () => {
    const one = await pdf('one', 1);
    const two = await pdf('two', 2);
    const r = await run('/api/v1/tools/pdf/merge-pdf', await form({ file: [await filePart(one), await filePart(two)] }));
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const out = await PDFDocument.load(r.file!);
    assert.equal(out.getPageCount(), 3);
    const merged = path.join(dir, 'merged.pdf');
    await writeFile(merged, r.file!);
    const first = await exec('pdftotext', ['-f', '1', '-l', '1', merged, '-']);
    assert.match(first.stdout, /one page 1/);
  });
});
