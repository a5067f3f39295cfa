/**
 * OCR: the same page (16 lines of rendered text, 1240 × 900 px) read by the plain tesseract CLI, by
 * kiln's ocr at 'fast' (tesseract, plus levelling, layout and boxes) and at 'balanced' (PP-OCRv4 on
 * the OCR runtime generation, installed into the bench's data dir from the shipped signed index on
 * first use: about 30 s, then reused). Prints ms/op and each side's character accuracy.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { activeGeneration, installGeneration } from '../src/ai/ocr/generations.js';
import { Bench, dir, heavy, kilnRun, shAsync, type BenchOptions, type FamilyResult } from './lib.js';

const LINES = Array.from({ length: 16 }, (_, i) =>
  [
    'The quick brown fox jumps over the lazy dog near the kiln.',
    'Stoneware fires at about 1200 degrees; porcelain goes higher.',
    'Glazes melt into glass; oxides give them colour and depth.',
    'Pack my box with five dozen liquor jugs, numbers 0123456789.',
  ][i % 4]!.replace('the', i % 2 ? 'a' : 'the'),
);

async function page(p: string): Promise<string> {
  if (existsSync(p)) return p;
  const text = LINES.map((l, i) => `<text x="40" y="${60 + i * 52}" font-family="DejaVu Sans" font-size="26">${l}</text>`).join('');
  await sharp(
    Buffer.from(
      `<svg xmlns="http://www.w3.org/2000/svg" width="1240" height="900"><rect width="100%" height="100%" fill="#fff"/>${text}</svg>`,
    ),
  )
    .flatten({ background: '#ffffff' })
    .png()
    .toFile(p);
  return p;
}

function accuracy(got: string): number {
  const e = LINES.join(' ').replace(/\s+/g, ' ').trim();
  const g = got.replace(/\s+/g, ' ').trim();
  const prev = Array.from({ length: g.length + 1 }, (_, i) => i);
  for (let i = 1; i <= e.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= g.length; j++) {
      const t = prev[j]!;
      prev[j] = Math.min(prev[j]! + 1, prev[j - 1]! + 1, diag + (e[i - 1] === g[j - 1] ? 0 : 1));
      diag = t;
    }
  }
  return Math.max(0, 1 - prev[g.length]! / e.length);
}

export async function benchOcr(o: BenchOptions): Promise<FamilyResult> {
  const b = new Bench(o, 'ocr');
  const file = await page(path.join(dir(o.fixDir, 'ocr'), 'page-16-lines.png'));
  const dataDir = path.join(o.outDir, 'data');
  if (!(await activeGeneration(dataDir))) {
    const t0 = Date.now();
    await installGeneration(dataDir).then(
      (r) => o.print(`  OCR runtime ${r.generation.id} installed in ${((Date.now() - t0) / 1000).toFixed(1)} s`),
      (e) => o.print(`  OCR runtime not installed (${(e as Error).message.split('\n')[0]}): balanced will fail`),
    );
  }
  const read: Record<string, string> = {};
  const text = async (key: string, settings: Record<string, unknown>) => {
    const r = await kilnRun(o, 'ocr', [file], settings);
    read[key] = String(r.data?.text ?? '');
  };
  b.heading('ocr of one 1240 × 900 page with 16 lines (text on stdout / in the result)');
  await b.compare(
    [
      [
        'tesseract-cli',
        'tesseract CLI (eng, psm 3, text)',
        async () => {
          read['tesseract-cli'] = await shAsync('tesseract', [file, '-', '-l', 'eng', '--psm', '3']);
        },
      ],
      ['kiln-ocr-fast', 'kiln runTool ocr --quality fast', () => text('kiln-ocr-fast', { quality: 'fast' })],
      ['kiln-ocr-balanced', 'kiln runTool ocr --quality balanced', () => text('kiln-ocr-balanced', { quality: 'balanced' })],
    ],
    heavy(o),
  );
  for (const [k, t] of Object.entries(read)) o.print(`  character accuracy ${k.padEnd(20)} ${(accuracy(t) * 100).toFixed(1)} %`);
  b.ratios([
    ['kiln-ocr-fast', 'tesseract-cli', 'levelling, 2× upscale of small pages, TSV layout and boxes'],
    ['kiln-ocr-balanced', 'tesseract-cli'],
    ['kiln-ocr-balanced', 'kiln-ocr-fast'],
  ]);
  return b.result;
}
