import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import sharp from 'sharp';
import type { KilnError } from '../../../src/core/errors.js';
import { carveColumns, energyMap, findSeam } from '../../../src/tools/image/_shared/seam-carve.js';
import { kiln } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/fixtures.js';
import { runB } from './b-helpers.js';
import { getTool } from '../../../src/tools/index.js';
import { inputFile, runTool } from '../../../src/tools/run-tool.js';
import { createWorkspace } from '../../../src/core/workspace.js';

const dir = tempDir();

/** width×height RGB: columns < flatCols are flat grey, the rest random noise (high energy). */
async function flatAndNoise(name: string, width: number, height: number, flatCols: number, vertical = false): Promise<string> {
  const b = Buffer.alloc(width * height * 3);
  let seed = 7;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff) * 255;
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      const flat = vertical ? y < flatCols : x < flatCols;
      b[i] = flat ? 128 : rnd();
      b[i + 1] = flat ? 128 : rnd();
      b[i + 2] = flat ? 128 : rnd();
    }
  const p = path.join(dir, name);
  await sharp(b, { raw: { width, height, channels: 3 } })
    .png()
    .toFile(p);
  return p;
}

describe('seam carving core', () => {
  it('finds the zero-energy column of an otherwise busy image', () => {
    const w = 9;
    const h = 6;
    const e = new Float32Array(w * h).fill(10);
    for (let y = 0; y < h; y++) e[y * w + 5] = 0;
    const seam = findSeam(e, w, h, new Float32Array(w * h), new Int8Array(w * h));
    assert.deepEqual([...seam], [5, 5, 5, 5, 5, 5]);
  });
  it('Sobel energy is zero on flat areas and sobelThreshold zeroes weak edges', () => {
    const w = 10;
    const h = 4;
    const grey = new Float32Array(w * h);
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) grey[y * w + x] = x < 5 ? 100 : 104;
    const plane = { width: w, height: h, rgba: new Uint8Array(w * h * 4), grey };
    const e = energyMap(plane, 1);
    assert.equal(e[1 * w + 1], 0);
    assert.ok(e[1 * w + 4]! > 0);
    assert.equal(energyMap(plane, 20)[1 * w + 4], 0);
  });
  it('removes the low-energy columns first', () => {
    const w = 12;
    const h = 8;
    const grey = new Float32Array(w * h);
    const rgba = new Uint8Array(w * h * 4);
    let seed = 3;
    for (let i = 0; i < w * h; i++) {
      const x = i % w;
      grey[i] = x >= 4 && x < 8 ? 50 : (seed = (seed * 1103515245 + 12345) & 0x7fffffff) % 255;
      rgba[i * 4] = x;
    }
    const { plane, removedFirstRow } = carveColumns({ width: w, height: h, rgba, grey }, 3, 1);
    assert.equal(plane.width, 9);
    assert.ok(
      removedFirstRow.every((c) => c >= 4 && c < 8),
      JSON.stringify(removedFirstRow),
    );
  });
});

describe('content-aware-resize', () => {
  let src: string;
  before(async () => {
    src = await flatAndNoise('seam.png', 240, 120, 120);
  });
  it('narrows the image by carving the flat half and keeps the detailed half pixel for pixel', async () => {
    const r = await runB(dir, 'content-aware-resize', [src], { width: 160 });
    const m = await sharp(r.file!).metadata();
    assert.deepEqual([m.width, m.height, m.format], [160, 120, 'png']);
    // An opaque input stays opaque: no alpha channel it never had (ensureAlpha's always-true hasAlpha was read).
    assert.equal((await sharp(src).metadata()).hasAlpha, false);
    assert.equal(m.hasAlpha, false);
    const removed = r.data!.removedColumns as number[];
    assert.equal(removed.length, 80);
    assert.ok(
      removed.every((c) => c < 120),
      'every seam came from the flat half',
    );
    const orig = await sharp(src).extract({ left: 120, top: 0, width: 120, height: 120 }).raw().toBuffer();
    const kept = await sharp(r.file!).removeAlpha().extract({ left: 40, top: 0, width: 120, height: 120 }).raw().toBuffer();
    assert.ok(orig.equals(kept), 'the noisy half is untouched');
  });
  it('carves rows for height, and square uses the shorter side', async () => {
    const tall = await flatAndNoise('seam-v.png', 100, 200, 100, true);
    const r = await runB(dir, 'content-aware-resize', [tall], { height: 140, blurRadius: 0 });
    const m = await sharp(r.file!).metadata();
    assert.deepEqual([m.width, m.height], [100, 140]);
    const orig = await sharp(tall).extract({ left: 0, top: 100, width: 100, height: 100 }).raw().toBuffer();
    const kept = await sharp(r.file!).removeAlpha().extract({ left: 0, top: 40, width: 100, height: 100 }).raw().toBuffer();
    assert.ok(orig.equals(kept), 'the noisy rows are untouched');
    const sq = await runB(dir, 'content-aware-resize', [src], { square: true });
    assert.deepEqual([(await sharp(sq.file!).metadata()).width, (await sharp(sq.file!).metadata()).height], [120, 120]);
    const both = await runB(dir, 'content-aware-resize', [src], { width: 200, height: 100, sobelThreshold: 20 });
    assert.deepEqual([(await sharp(both.file!).metadata()).width, (await sharp(both.file!).metadata()).height], [200, 100]);
  });
  it('says protectFaces could not be applied without the face-detection bundle', async () => {
    const r = await runB(dir, 'content-aware-resize', [src], { width: 230, protectFaces: true });
    const pf = r.data!.protectFaces as { requested: boolean; applied: boolean; reason: string };
    assert.equal(pf.requested, true);
    assert.equal(pf.applied, false);
    assert.match(pf.reason, /face-detection bundle is not installed/);
  });
  it('rejects enlarging and missing targets', async () => {
    await assert.rejects(
      runB(dir, 'content-aware-resize', [src], { width: 300 }),
      (e: KilnError) => e.code === 'VALIDATION_ERROR' && /only removes/.test(e.message),
    );
    await assert.rejects(runB(dir, 'content-aware-resize', [src], {}), (e: KilnError) => e.code === 'VALIDATION_ERROR');
    await assert.rejects(
      runB(dir, 'content-aware-resize', [src], { blurRadius: 21, width: 10 }),
      (e: KilnError) => e.code === 'VALIDATION_ERROR',
    );
  });
  it('cancelling stops the worker and leaves no output', async () => {
    const big = await flatAndNoise('cancel.png', 700, 500, 300);
    const ws = await createWorkspace();
    try {
      const ac = new AbortController();
      const t0 = Date.now();
      setTimeout(() => ac.abort(), 150);
      await assert.rejects(
        runTool(
          getTool('content-aware-resize'),
          { files: [await inputFile(big)], extra: {} },
          { width: 100 },
          { workDir: ws.dir, dataDir: dir, signal: ac.signal },
        ),
        (e: KilnError) => e.code === 'CANCELLED',
      );
      assert.ok(Date.now() - t0 < 5000, 'returned promptly');
      assert.deepEqual(readdirSync(path.join(ws.dir, 'out')), []);
    } finally {
      await ws.dispose();
    }
  });
  it('above the pixel guard the image is carved at a reduced size and still comes out at the exact target (CLI)', async () => {
    const out = path.join(dir, 'guard-out.png');
    const r = await kiln(['content-aware-resize', src, '--width', '200', '-o', out, '--json'], { env: { KILN_SEAM_MAX_PIXELS: '20000' } });
    assert.equal(r.code, 0, r.stderr);
    const data = (JSON.parse(r.stdout.trim()) as { data: { carvedAt?: { width: number; height: number } } }).data;
    assert.deepEqual(data.carvedAt, { width: 200, height: 100 });
    const m = await sharp(out).metadata();
    assert.deepEqual([m.width, m.height], [200, 120]);
  });
});
