/**
 * `npm run bench`: kiln against the raw engines and peer tools on the same input, in the same run.
 * Resize a 12-megapixel JPEG to 800 px wide:
 *   - kiln in process (runTool) vs sharp called directly,
 *   - the kiln CLI (a process per file, as a script would call it) vs `vipsthumbnail` and ImageMagick,
 *   - the kiln daemon under load (autocannon, 2 connections) in requests/s.
 * Prints ms per operation and ratios. BENCH_QUICK=1 runs fewer iterations.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { createWorkspace } from '../src/core/workspace.js';
import { getTool } from '../src/tools/index.js';
import { inputFile, runTool } from '../src/tools/run-tool.js';
import { benchDaemon } from './daemon.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', ...(import.meta.url.includes('/dist/') ? ['..'] : []));
const FIX = path.join(ROOT, 'bench', 'fixtures');
const OUT = path.join(os.tmpdir(), `kiln-bench-${process.pid}`);
const QUICK = process.env.BENCH_QUICK === '1';

async function fixture(): Promise<string> {
  mkdirSync(FIX, { recursive: true });
  const p = path.join(FIX, 'photo-12mp.jpg');
  if (existsSync(p)) return p;
  const width = 4000;
  const height = 3000;
  // Smooth gradients plus noise: compresses and decodes like a real photo.
  const buf = Buffer.alloc(width * height * 3);
  let seed = 7;
  for (let i = 0; i < buf.length; i += 3) {
    const x = (i / 3) % width;
    const y = Math.floor(i / 3 / width);
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    const n = (seed >> 16) % 24;
    buf[i] = ((x * 255) / width + n) & 255;
    buf[i + 1] = ((y * 255) / height + n) & 255;
    buf[i + 2] = (128 + Math.sin(x / 50) * 80 + n) & 255;
  }
  await sharp(buf, { raw: { width, height, channels: 3 } }).jpeg({ quality: 90 }).toFile(p);
  return p;
}

async function time(label: string, n: number, fn: (i: number) => Promise<void> | void): Promise<number> {
  await fn(-1); // warm-up
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await fn(i);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6 / n;
  process.stdout.write(`  ${label.padEnd(34)} ${ms.toFixed(1).padStart(8)} ms/op\n`);
  return ms;
}

function run(cmd: string, args: string[]): void {
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  if (r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr?.toString().slice(0, 300)}`);
}

function have(bin: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${bin}`]).status === 0;
}

async function main(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  const src = await fixture();
  const n = QUICK ? 3 : 10;
  process.stdout.write(`\nresize 4000x3000 JPEG → 800 px wide (${n} runs each, ${os.cpus().length} cores, node ${process.version})\n\n`);
  const resize = getTool('resize');
  const results: Record<string, number> = {};

  results.sharp = await time('sharp direct (in process)', n, async (i) => {
    await sharp(src).resize({ width: 800 }).jpeg({ quality: 90, mozjpeg: true }).toFile(path.join(OUT, `s${i}.jpg`));
  });
  results.kilnInProcess = await time('kiln runTool (in process)', n, async () => {
    const ws = await createWorkspace();
    try {
      await runTool(resize, { files: [await inputFile(src)] , extra: {} }, { width: 800 }, { workDir: ws.dir, dataDir: OUT });
    } finally {
      await ws.dispose();
    }
  });
  const kilnBin = path.join(ROOT, 'bin', 'kiln');
  results.kilnCli = await time('kiln CLI (process per file)', n, (i) => run(process.execPath, [kilnBin, 'resize', src, '--width', '800', '-o', path.join(OUT, `k${i}.jpg`), '-f']));
  if (have('vipsthumbnail')) results.vips = await time('vipsthumbnail (libvips CLI)', n, (i) => run('vipsthumbnail', [src, '-s', '800x', '-o', path.join(OUT, `v${i}.jpg[Q=90]`)]));
  if (existsSync('/usr/bin/convert')) results.magick = await time('ImageMagick convert -resize', n, (i) => run('/usr/bin/convert', [src, '-resize', '800x', '-quality', '90', path.join(OUT, `m${i}.jpg`)]));

  process.stdout.write('\nratios (lower is faster than the reference):\n');
  const ratio = (a: string, b: string) => results[a] !== undefined && results[b] !== undefined && process.stdout.write(`  ${a} / ${b}`.padEnd(36) + `${(results[a]! / results[b]!).toFixed(2)}x\n`);
  ratio('kilnInProcess', 'sharp');
  ratio('kilnCli', 'vips');
  ratio('kilnCli', 'magick');
  ratio('kilnCli', 'sharp');

  await benchDaemon(src, QUICK ? 5 : 10, results.kilnInProcess);
  rmSync(OUT, { recursive: true, force: true });
}

main().catch((e) => {
  process.stderr.write(`bench failed: ${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
