/**
 * PDF: kiln against qpdf and Ghostscript called directly with the arguments kiln gives them.
 *   - merge 20 PDFs (5 text pages each),
 *   - extract pages 2-5,10,r1 of a 60-page PDF,
 *   - compress a 4-page PDF of photos at quality 75 (Ghostscript pdfwrite with kiln's parameters),
 *   - merges in a `kiln serve` holding 600 MB, children forked or posix_spawned (bench/spawn-load.ts).
 */
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { compressionParams } from '../src/engines/ghostscript.js';
import { Bench, dir, heavy, kilnCli, kilnRun, requireOutput, shAsync, type BenchOptions, type FamilyResult } from './lib.js';
import { spawnLoadCase } from './spawn-load.js';

async function textPdf(p: string, pages: number, label: string): Promise<string> {
  if (existsSync(p)) return p;
  const { PDFDocument, StandardFonts } = await import('@cantoo/pdf-lib');
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 1; i <= pages; i++) {
    const page = doc.addPage([595, 842]);
    page.drawText(`${label}, page ${i}`, { x: 50, y: 790, size: 20, font });
    for (let l = 0; l < 45; l++)
      page.drawText(`Line ${l + 1}: the quick brown fox jumps over the lazy dog ${i * 100 + l}.`, {
        x: 50,
        y: 750 - l * 15,
        size: 10,
        font,
      });
  }
  writeFileSync(p, await doc.save());
  return p;
}

/** Pages with a large photo each: what compress-pdf is for (scans, exported slides). */
async function imagePdf(p: string, pages: number, px: number): Promise<string> {
  if (existsSync(p)) return p;
  const { PDFDocument } = await import('@cantoo/pdf-lib');
  const doc = await PDFDocument.create();
  for (let i = 0; i < pages; i++) {
    const w = px;
    const h = Math.round((px * 3) / 4);
    const raw = Buffer.alloc(w * h * 3);
    let seed = 31 + i;
    for (let k = 0; k < raw.length; k += 3) {
      const x = (k / 3) % w;
      const y = Math.floor(k / 3 / w);
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      const n = (seed >> 16) % 20;
      raw[k] = ((x * 255) / w + n + i * 30) & 255;
      raw[k + 1] = ((y * 255) / h + n) & 255;
      raw[k + 2] = (128 + Math.sin((x + y) / 40) * 90 + n) & 255;
    }
    const jpg = await sharp(raw, { raw: { width: w, height: h, channels: 3 } })
      .jpeg({ quality: 92 })
      .toBuffer();
    const img = await doc.embedJpg(jpg);
    const page = doc.addPage([595, 842]);
    page.drawImage(img, { x: 20, y: 200, width: 555, height: 416 });
  }
  writeFileSync(p, await doc.save());
  return p;
}

export async function benchPdf(o: BenchOptions): Promise<FamilyResult> {
  const b = new Bench(o, 'pdf');
  const out = dir(o.outDir, 'pdf');
  const fx = dir(o.fixDir, 'pdf');
  const qpdf = (args: string[]) => shAsync('qpdf', args);

  const big = await textPdf(path.join(fx, o.smoke ? 'doc-12.pdf' : 'doc-60.pdf'), o.smoke ? 12 : 60, 'Long document');
  b.heading(`extract pages 2-5,10,r1 of a ${o.smoke ? 12 : 60}-page PDF`);
  const range = '2-5,10,r1';
  await b.compare([
    [
      'qpdf-extract',
      'qpdf --pages direct',
      async (i) => {
        const p = path.join(out, `x${i}.pdf`);
        await qpdf([big, '--pages', '.', range, '--', p]);
        requireOutput(p);
      },
    ],
    ['kiln-extract', 'kiln runTool extract-pages', () => kilnRun(o, 'extract-pages', [big], { range })],
    // The smoke test leaves the CLI to the image family: one node start-up per family is most of its 30 s.
    !o.smoke && [
      'cli-extract',
      'kiln CLI extract-pages',
      (i) => kilnCli(['extract-pages', big, '--range', range, '-o', path.join(out, `kx${i}.pdf`), '-q']),
    ],
  ]);
  b.ratios([
    ['kiln-extract', 'qpdf-extract', 'runTool overhead over one qpdf process'],
    ['cli-extract', 'qpdf-extract'],
  ]);
  if (o.smoke) return b.result;

  const parts: string[] = [];
  for (let i = 1; i <= 20; i++) parts.push(await textPdf(path.join(fx, `part-${String(i).padStart(2, '0')}.pdf`), 5, `Part ${i}`));
  b.heading('merge 20 PDFs of 5 pages');
  await b.compare([
    [
      'qpdf-merge',
      'qpdf --empty --pages direct',
      async (i) => {
        const p = path.join(out, `m${i}.pdf`);
        await qpdf(['--empty', '--pages', ...parts.flatMap((s) => [s, '1-z']), '--', p]);
        requireOutput(p);
      },
    ],
    ['kiln-merge', 'kiln runTool merge-pdf', () => kilnRun(o, 'merge-pdf', parts)],
    ['cli-merge', 'kiln CLI merge-pdf', (i) => kilnCli(['merge-pdf', ...parts, '-o', path.join(out, `km${i}.pdf`), '-q'])],
  ]);
  b.ratios([
    ['kiln-merge', 'qpdf-merge', 'runTool overhead over one qpdf process'],
    ['cli-merge', 'qpdf-merge'],
  ]);

  const photos = await imagePdf(path.join(fx, 'photos-4.pdf'), 4, 2000);
  b.heading('compress a 4-page PDF of 2000x1500 photos at quality 75');
  const { params, post } = compressionParams(75);
  await b.compare(
    [
      [
        'gs-compress',
        'gs pdfwrite direct (same parameters)',
        async (i) => {
          const p = path.join(out, `c${i}.pdf`);
          await shAsync('gs', [
            '-q',
            '-dSAFER',
            '-dBATCH',
            '-dNOPAUSE',
            '-sDEVICE=pdfwrite',
            `-sOutputFile=${p}`,
            ...params,
            ...post,
            '-f',
            photos,
          ]);
          requireOutput(p);
        },
      ],
      ['kiln-compress', 'kiln runTool compress-pdf --quality 75', () => kilnRun(o, 'compress-pdf', [photos], { quality: 75 })],
      [
        'cli-compress',
        'kiln CLI compress-pdf --quality 75',
        (i) => kilnCli(['compress-pdf', photos, '--quality', '75', '-o', path.join(out, `kc${i}.pdf`), '-q']),
      ],
    ],
    heavy(o),
  );
  b.ratios([
    ['kiln-compress', 'gs-compress', 'same Ghostscript work'],
    ['cli-compress', 'gs-compress'],
  ]);
  await spawnLoadCase(b, o, parts);
  return b.result;
}
