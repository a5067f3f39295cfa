import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { getTool } from '../../../src/tools/index.js';
import { runTool, inputFile } from '../../../src/tools/run-tool.js';
import { createWorkspace } from '../../../src/core/workspace.js';
import type { KilnError } from '../../../src/core/errors.js';
import { tempDir } from '../../helpers/fixtures.js';
import { readZip } from '../../helpers/zip.js';

const dir = tempDir();

async function run(file: string) {
  const ws = await createWorkspace();
  try {
    const out = await runTool(
      getTool('pdf-to-wordprocessor'),
      { files: [await inputFile(file)], extra: {} },
      {},
      { workDir: ws.dir, dataDir: dir },
    );
    const dest = path.join(dir, out.output!.name);
    writeFileSync(dest, readFileSync(out.output!.path));
    return dest;
  } finally {
    await ws.dispose();
  }
}

/** A two-page PDF: a heading, a paragraph wrapped over two lines, a second paragraph, an image; then page 2. */
async function makePdf(p: string) {
  const { PDFDocument, StandardFonts, rgb } = await import('@cantoo/pdf-lib');
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const bold = await pdf.embedFont(StandardFonts.HelveticaBold);
  const p1 = pdf.addPage([595, 842]);
  p1.drawText('Firing Guide', { x: 72, y: 760, size: 24, font: bold });
  p1.drawText('The first paragraph explains how a kiln reaches cone six and', { x: 72, y: 720, size: 12, font });
  p1.drawText('why the final hour of the firing matters most.', { x: 72, y: 705, size: 12, font });
  p1.drawText('A second paragraph stands apart from the first one.', { x: 72, y: 675, size: 12, font });
  const png = await sharp({ create: { width: 64, height: 32, channels: 3, background: { r: 200, g: 30, b: 30 } } })
    .png()
    .toBuffer();
  const img = await pdf.embedPng(png);
  p1.drawImage(img, { x: 72, y: 560, width: 128, height: 64 });
  p1.drawText('Text below the picture.', { x: 72, y: 530, size: 12, font, color: rgb(0, 0, 0) });
  const p2 = pdf.addPage([595, 842]);
  p2.drawText('Second page text.', { x: 72, y: 760, size: 12, font });
  writeFileSync(p, await pdf.save());
  return p;
}

describe('pdf-to-wordprocessor', () => {
  it('rebuilds headings, paragraphs, the image and the page break', async () => {
    const docx = await run(await makePdf(path.join(dir, 'guide.pdf')));
    const files = await readZip(docx);
    const xml = files.get('word/document.xml')!.toString('utf8');
    const paras = [...xml.matchAll(/<w:p>([\s\S]*?)<\/w:p>|<w:p [^>]*>([\s\S]*?)<\/w:p>/g)].map((m) => m[0]);
    const text = (p: string) => [...p.matchAll(/<w:t[^>]*>([^<]*)<\/w:t>/g)].map((m) => m[1]).join('');
    const texts = paras.map(text).filter(Boolean);
    assert.deepEqual(texts, [
      'Firing Guide',
      'The first paragraph explains how a kiln reaches cone six and why the final hour of the firing matters most.',
      'A second paragraph stands apart from the first one.',
      'Text below the picture.',
      'Second page text.',
    ]);
    assert.match(paras.find((p) => text(p) === 'Firing Guide')!, /<w:pStyle w:val="Heading1"\/>/);
    assert.match(paras.find((p) => text(p) === 'Second page text.')!, /<w:pageBreakBefore\/>/);
    const media = [...files.keys()].filter((k) => k.startsWith('word/media/'));
    assert.equal(media.length, 1);
    const meta = await sharp(files.get(media[0]!)!).metadata();
    assert.ok(meta.width! >= 32, 'the image survives');
    // The picture sits between the second paragraph and the text below it.
    const order = xml.indexOf('<w:drawing>');
    assert.ok(order > xml.indexOf('stands apart') && order < xml.indexOf('Text below the picture.'));
  });

  it('rejects a PDF without a text layer or images, and a corrupt PDF', async () => {
    const { PDFDocument } = await import('@cantoo/pdf-lib');
    const empty = await PDFDocument.create();
    empty.addPage([200, 200]);
    const blank = path.join(dir, 'blank.pdf');
    writeFileSync(blank, await empty.save());
    await assert.rejects(run(blank), (e: KilnError) => e.code === 'UNSUPPORTED_INPUT' && e.reason === 'no-text-layer');
    const bad = path.join(dir, 'bad.pdf');
    writeFileSync(bad, '%PDF-1.7\n1 0 obj garbage\n');
    await assert.rejects(run(bad), (e: KilnError) => e.code === 'UNSUPPORTED_INPUT');
  });

  it('names a password-protected or damaged PDF like every PDF tool does (not "pdftohtml failed")', async () => {
    const plain = await makePdf(path.join(dir, 'to-lock.pdf'));
    const locked = path.join(dir, 'locked.pdf');
    execFileSync('qpdf', ['--encrypt', 'open-me', 'owner', '256', '--', plain, locked]);
    await assert.rejects(
      run(locked),
      (e: KilnError) => e.code === 'UNSUPPORTED_INPUT' && e.reason === 'pdf-encrypted' && /unlock-pdf/.test(e.message),
    );
    const bytes = readFileSync(plain);
    const cut = path.join(dir, 'cut.pdf');
    writeFileSync(cut, bytes.subarray(0, bytes.length >> 1));
    await assert.rejects(
      run(cut),
      (e: KilnError) => e.code === 'UNSUPPORTED_INPUT' && e.reason === 'pdf-corrupt' && /repair-pdf/.test(e.message),
    );
  });
});
