/**
 * OCR fixtures: text rendered by the tests (sharp + SVG with installed fonts), a character accuracy
 * measure, and an OCR runtime release signed with a test key, built from the pinned npm tarballs
 * (through the shared verified cache) once and kept beside that cache for the next test files.
 */
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { installGeneration } from '../../src/ai/ocr/generations.js';
import { buildRelease } from '../../src/ai/ocr/release.js';
import { INDEX_FILE, type ReleaseIndex } from '../../src/ai/ocr/release-index.js';
import { cacheDir } from '../../src/ai/paths.js';

/** An Ed25519 key from a fixed seed (PKCS#8 DER prefix + 32 bytes): the same test key in every process. */
export function testKey(seed = 7): { privateKeyPem: string; publicKey: KeyObject } {
  const der = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.alloc(32, seed)]);
  const key = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  return { privateKeyPem: key.export({ format: 'pem', type: 'pkcs8' }).toString(), publicKey: createPublicKey(key) };
}

export interface TestRelease {
  dir: string;
  index: ReleaseIndex;
  indexFile: string;
  archiveFile: string;
}

/** The pinned release for this platform signed with the test key (built once per cache). */
export async function testRelease(release = '0.0.1-test'): Promise<TestRelease> {
  const cache = cacheDir('/nonexistent');
  const dir = path.join(cache, `ocr-test-release-${release}`);
  const indexFile = path.join(dir, INDEX_FILE);
  if (!existsSync(indexFile)) {
    const { index, archive } = await buildRelease({ privateKeyPem: testKey().privateKeyPem, release, cache });
    const tmp = `${dir}.${process.pid}.tmp`;
    await mkdir(tmp, { recursive: true });
    await writeFile(path.join(tmp, index.archive.file), archive);
    await writeFile(path.join(tmp, INDEX_FILE), JSON.stringify(index, null, 2));
    await rename(tmp, dir).catch(() => {});
  }
  const index = JSON.parse(await readFile(indexFile, 'utf8')) as ReleaseIndex;
  return { dir, index, indexFile, archiveFile: path.join(dir, index.archive.file) };
}

/** Installs the test release into `dataDir` (import path: index + archive). */
export async function installTestRuntime(dataDir: string, release = '0.0.1-test') {
  const r = await testRelease(release);
  return installGeneration(dataDir, { indexFile: r.indexFile, archiveFile: r.archiveFile, keys: [testKey().publicKey] });
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');

export interface TextRun {
  text: string;
  x: number;
  y: number;
  size: number;
  font?: string;
  weight?: string;
}

/** A white page with text runs (y is the baseline), optionally rotated like a skewed scan. */
export async function renderText(
  file: string,
  width: number,
  height: number,
  runs: TextRun[],
  o: { rotate?: number; noise?: boolean } = {},
): Promise<string> {
  const body = runs
    .map(
      (r) =>
        `<text x="${r.x}" y="${r.y}" font-family="${r.font ?? 'DejaVu Sans'}" font-weight="${r.weight ?? 'normal'}" font-size="${r.size}" fill="#111">${esc(r.text)}</text>`,
    )
    .join('');
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="#fff"/>${body}</svg>`;
  let img = sharp(Buffer.from(svg)).flatten({ background: '#ffffff' });
  if (o.rotate) img = sharp(await img.png().toBuffer()).rotate(o.rotate, { background: '#ffffff' });
  if (o.noise) {
    const { data, info } = await img.raw().toBuffer({ resolveWithObject: true });
    let seed = 99;
    for (let i = 0; i < data.length; i++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      data[i] = Math.max(0, Math.min(255, data[i]! + ((seed % 41) - 20)));
    }
    img = sharp(data, { raw: { width: info.width, height: info.height, channels: info.channels } });
  }
  await img.png().toFile(file);
  return file;
}

/** Lines of text laid out one under another. */
export function paragraph(lines: string[], o: { x?: number; y?: number; size?: number; font?: string; lead?: number } = {}): TextRun[] {
  const size = o.size ?? 28;
  return lines.map((text, i) => ({ text, x: o.x ?? 30, y: (o.y ?? 50) + i * size * (o.lead ?? 1.6), size, font: o.font }));
}

function levenshtein(a: string, b: string): number {
  const prev = new Array(b.length + 1).fill(0).map((_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const t = prev[j]!;
      prev[j] = Math.min(prev[j]! + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = t;
    }
  }
  return prev[b.length]!;
}

/** 1 − edit distance / length of the expected text, whitespace collapsed. */
export function charAccuracy(expected: string, got: string): number {
  const n = (s: string) => s.replace(/\s+/g, ' ').trim();
  const e = n(expected);
  return Math.max(0, 1 - levenshtein(e, n(got)) / e.length);
}
