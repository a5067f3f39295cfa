import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { PDFDocument, StandardFonts, rgb } from '@cantoo/pdf-lib';
import sharp from 'sharp';
import type { KilnError } from '../../../src/core/errors.js';
import type { Tool } from '../../../src/core/tool.js';
import { createWorkspace } from '../../../src/core/workspace.js';
import { inputFile, runTool } from '../../../src/tools/run-tool.js';
import { makePhoto, tempDir } from '../../helpers/fixtures.js';
import { pageCount, pageTexts, runPdfTool, tryRun } from './pdf-helpers.js';

const dir = tempDir('kiln-pdf-gs-');
let photoPdf: string;

/** Two pages: colour text, and a noisy 640×400 JPEG photo drawn at 4×2.7 inches (160 dpi). */
async function makePhotoPdf(file: string): Promise<string> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.TimesRoman);
  const img = await doc.embedJpg(readFileSync(await makePhoto(dir, 'photo.jpg', 640, 400)));
  const p1 = doc.addPage([400, 400]);
  p1.drawText('Colour heading', { x: 20, y: 350, size: 20, font, color: rgb(1, 0, 0) });
  p1.drawRectangle({ x: 20, y: 20, width: 200, height: 100, color: rgb(0, 0, 1) });
  const p2 = doc.addPage([400, 400]);
  p2.drawImage(img, { x: 20, y: 100, width: 288, height: 192 });
  p2.drawText('Photo page', { x: 20, y: 350, size: 14, font });
  writeFileSync(file, await doc.save());
  return file;
}

/** Renders page `n` at 36 dpi and returns the largest |R-G|, |G-B| over all pixels. */
async function maxChroma(file: string, n: number): Promise<number> {
  const base = path.join(dir, `chroma-${Math.random().toString(36).slice(2)}`);
  execFileSync('pdftoppm', ['-r', '36', '-f', String(n), '-l', String(n), '-png', '-singlefile', file, base]);
  const { data, info } = await sharp(`${base}.png`).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  let max = 0;
  for (let i = 0; i < data.length; i += info.channels)
    max = Math.max(max, Math.abs(data[i]! - data[i + 1]!), Math.abs(data[i + 1]! - data[i + 2]!));
  return max;
}

describe('Ghostscript tools', () => {
  before(async () => {
    photoPdf = await makePhotoPdf(path.join(dir, 'photo.pdf'));
  });

  it('compress-pdf quality mode shrinks images and reports sizes', async () => {
    const r = await runPdfTool(dir, 'compress-pdf', [photoPdf], { quality: 30 });
    const before = statSync(photoPdf).size;
    const after = statSync(r.file!).size;
    assert.equal(r.data!.originalSize, before);
    assert.equal(r.data!.processedSize, after);
    assert.ok(after < before * 0.7, `${after} vs ${before}`);
    assert.equal(pageCount(r.file!), 2);
    assert.match(pageTexts(r.file!)[0]!, /Colour heading/);
  });

  it('compress-pdf quality acts on JPEG photos even without downsampling (higher quality, larger file)', async () => {
    // The photo is drawn at 160 dpi: quality 90 (275 dpi) and 60 (175 dpi) keep its pixels, only the JPEG quality differs.
    const hi = await runPdfTool(dir, 'compress-pdf', [photoPdf], { quality: 90 });
    const lo = await runPdfTool(dir, 'compress-pdf', [photoPdf], { quality: 60 });
    assert.equal(hi.data!.usedOriginal, false);
    const sizes = [statSync(hi.file!).size, statSync(lo.file!).size];
    assert.ok(sizes[0]! > sizes[1]! * 1.2, `${sizes}`);
    for (const f of [hi.file!, lo.file!]) assert.match(execFileSync('pdfimages', ['-list', f]).toString(), /\s640\s+400\s+rgb/);
  });

  it('compress-pdf targetSize stops at the first setting under the target, or says it was not met', async () => {
    const before = statSync(photoPdf).size;
    const target = Math.round(before / 1024 / 3);
    const r = await runPdfTool(dir, 'compress-pdf', [photoPdf], { mode: 'targetSize', targetSizeKb: target });
    assert.equal(r.data!.targetMet, true);
    assert.ok(statSync(r.file!).size <= target * 1024);
    const attempts = r.data!.attempts as { quality: number; size: number }[];
    assert.ok(attempts.slice(0, -1).every((a) => a.size > target * 1024));

    const impossible = await runPdfTool(dir, 'compress-pdf', [photoPdf], { mode: 'targetSize', targetSizeKb: 0.5 });
    assert.equal(impossible.data!.targetMet, false);
    assert.equal((impossible.data!.attempts as unknown[]).length, 6);
    assert.ok(statSync(impossible.file!).size < before);
    await assert.rejects(
      runPdfTool(dir, 'compress-pdf', [photoPdf], { mode: 'targetSize' }),
      (e: KilnError) => e.code === 'VALIDATION_ERROR',
    );
  });

  it('grayscale-pdf removes all colour and keeps the text', async () => {
    assert.ok((await maxChroma(photoPdf, 1)) > 100);
    const r = await runPdfTool(dir, 'grayscale-pdf', [photoPdf]);
    assert.ok((await maxChroma(r.file!, 1)) <= 2);
    assert.ok((await maxChroma(r.file!, 2)) <= 2);
    assert.match(pageTexts(r.file!)[0]!, /Colour heading/);
  });

  it('pdfa-convert writes PDF/A-2b identification, an sRGB output intent and embedded fonts', async () => {
    const r = await runPdfTool(dir, 'pdfa-convert', [photoPdf]);
    // Decompressed copy, to read the XMP and catalog as text.
    const qdf = path.join(dir, 'pdfa-qdf.pdf');
    execFileSync('qpdf', ['--qdf', '--object-streams=disable', r.file!, qdf]);
    const text = readFileSync(qdf, 'latin1');
    assert.match(text, /pdfaid:part(>|=['"])2/);
    assert.match(text, /pdfaid:conformance(>|=['"])B/);
    assert.match(text, /\/OutputIntents/);
    assert.match(text, /\/S \/GTS_PDFA1/);
    assert.match(text, /\/DestOutputProfile \d+ 0 R/);
    assert.match(text, /sRGB IEC61966-2\.1/);
    // The output intent's profile is a 3-component ICC stream (its header names the 'RGB ' colour space).
    const profileObj = /\/DestOutputProfile (\d+) 0 R/.exec(text)![1];
    const profile = new RegExp(`\\n${profileObj} 0 obj\\s*<<([\\s\\S]*?)>>\\s*stream\\n([\\s\\S]{0,200})`).exec(text)!;
    assert.match(profile[1]!, /\/N 3/);
    assert.equal(profile[2]!.slice(16, 20), 'RGB ');
    // Other PDF/A-2 basics: a file identifier, no encryption, no JavaScript, PDF version at most 1.7.
    assert.match(text, /\/ID \[/);
    assert.doesNotMatch(text, /\/Encrypt|\/JavaScript|\/JS /);
    assert.match(readFileSync(r.file!, 'latin1').slice(0, 8), /^%PDF-1\.[4-7]/);
    // The source uses Times-Roman unembedded (a standard font); PDF/A needs every font embedded.
    const before = execFileSync('pdffonts', [photoPdf]).toString().trim().split('\n').slice(2);
    assert.ok(before.some((l) => / no /.test(l.slice(50))));
    const fonts = execFileSync('pdffonts', [r.file!]).toString().trim().split('\n').slice(2);
    assert.ok(fonts.length >= 1);
    for (const l of fonts) assert.match(l, /\s(yes)\s+(yes|no)\s+(yes|no)\s+\d+\s+\d+\s*$/, l);
    assert.equal(tryRun('qpdf', ['--check', r.file!]).code, 0);
    assert.match(pageTexts(r.file!)[0]!, /Colour heading/);
  });

  it('pdfa-convert keeps title, author, subject, keywords and creator written as UTF-16, in the dictionary and the XMP alike', async () => {
    // pdf-lib writes every information string as UTF-16 (as Word and many others do); Ghostscript 10.0
    // dropped the whole dictionary in PDF/A mode for that, and the archived copy said "Untitled".
    const doc = await PDFDocument.load(readFileSync(photoPdf));
    doc.setTitle('Rapport annuel — 年度报告 🎉');
    doc.setAuthor('Zoë Ångström');
    doc.setSubject('Plain subject');
    doc.setKeywords(['archive, 2026']);
    doc.setCreator('Writer 7');
    const src = path.join(dir, 'utf16-info.pdf');
    writeFileSync(src, await doc.save());
    const r = await runPdfTool(dir, 'pdfa-convert', [src]);
    const tags = JSON.parse(execFileSync('exiftool', ['-j', '-a', '-G1', '-PDF:all', '-XMP:all', r.file!]).toString())[0];
    // ExifTool's PDF reader loses characters outside UCS-2 and splits keywords; pdfinfo reads them whole.
    const info = execFileSync('pdfinfo', [r.file!]).toString();
    assert.match(info, /Title:\s+Rapport annuel — 年度报告 🎉\n/);
    assert.match(info, /Keywords:\s+archive, 2026\n/);
    assert.equal(tags['XMP-dc:Title'], 'Rapport annuel — 年度报告 🎉');
    assert.equal(tags['PDF:Author'], 'Zoë Ångström');
    assert.equal(tags['XMP-dc:Creator'], 'Zoë Ångström');
    assert.equal(tags['PDF:Subject'], 'Plain subject');
    assert.equal(tags['XMP-dc:Description'], 'Plain subject');
    assert.equal(tags['XMP-pdf:Keywords'], 'archive, 2026');
    assert.equal(tags['PDF:Creator'], 'Writer 7');
    assert.equal(tags['XMP-xmp:CreatorTool'], 'Writer 7');
    // Still PDF/A: identification kept, the packet's dates those of the dictionary, one uncompressed packet.
    assert.equal(tags['XMP-pdfaid:Part'], 2);
    assert.equal(tags['XMP-pdfaid:Conformance'], 'B');
    assert.equal(tags['XMP-xmp:ModifyDate'], tags['PDF:ModifyDate']);
    assert.equal(tags['XMP-xmp:CreateDate'], tags['PDF:CreateDate']);
    const qdf = path.join(dir, 'utf16-info-qdf.pdf');
    execFileSync('qpdf', ['--qdf', '--object-streams=disable', '--decode-level=none', r.file!, qdf]);
    const text = readFileSync(qdf, 'latin1');
    assert.equal(text.match(/\/Type \/Metadata/g)?.length, 1);
    assert.doesNotMatch(/<<[^>]*\/Type \/Metadata[^>]*>>/.exec(text)![0], /\/Filter/);
    assert.equal(tryRun('qpdf', ['--check', r.file!]).code, 0);
    assert.deepEqual(r.data!.restoredInfo, ['title', 'author', 'subject', 'keywords', 'creator']);
  });

  it('cancelling stops Ghostscript and leaves no output behind', async () => {
    const tool = ((await import('../../../src/tools/pdf/document/compress-pdf.js')) as { default: Tool }).default;
    const ws = await createWorkspace();
    try {
      const ac = new AbortController();
      setTimeout(() => ac.abort(), 150);
      const t0 = Date.now();
      await assert.rejects(
        runTool(
          tool,
          { files: [await inputFile(photoPdf)], extra: {} },
          { mode: 'targetSize', targetSizeKb: 0.1 },
          { workDir: ws.dir, dataDir: dir, signal: ac.signal },
        ),
        (e: KilnError) => e.code === 'CANCELLED',
      );
      assert.ok(Date.now() - t0 < 5000);
      assert.deepEqual(readdirSync(path.join(ws.dir, 'out')), []);
    } finally {
      await ws.dispose();
    }
  });
});
