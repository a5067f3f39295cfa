import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { vipsEnv } from '../../../src/engines/sharp.js';
import { getTool } from '../../../src/tools/index.js';
import { runTool, inputFile } from '../../../src/tools/run-tool.js';
import { createWorkspace } from '../../../src/core/workspace.js';
import type { KilnError } from '../../../src/core/errors.js';
import { makeImage, makePhoto, tempDir } from '../../helpers/fixtures.js';
import { kiln } from '../../helpers/cli.js';

const dir = tempDir();

async function run(file: string, settings: Record<string, unknown>) {
  const ws = await createWorkspace();
  try {
    const out = await runTool(getTool('compress'), { files: [await inputFile(file)], extra: {} }, settings, {
      workDir: ws.dir,
      dataDir: dir,
    });
    const p = out.output!.path;
    return {
      out,
      data: out.data as Record<string, number | boolean | string>,
      size: statSync(p).size,
      meta: await sharp(p).metadata(),
      raw: await sharp(p).raw().toBuffer(),
    };
  } finally {
    await ws.dispose();
  }
}

describe('compress', () => {
  it('keeps a JPEG XL input JPEG XL (encoded by vips)', async () => {
    const png = await makeImage(dir, 'for-jxl.png', 64, 48);
    const jxl = path.join(dir, 'in.jxl');
    execFileSync('vips', ['copy', png, jxl], { env: vipsEnv() });
    const ws = await createWorkspace();
    try {
      const out = await runTool(
        getTool('compress'),
        { files: [await inputFile(jxl)], extra: {} },
        { quality: 40 },
        { workDir: ws.dir, dataDir: dir },
      );
      const bytes = readFileSync(out.output!.path);
      // A bare JPEG XL codestream starts FF 0A; the ISO BMFF container with a 'JXL ' box.
      assert.ok(bytes.subarray(0, 2).equals(Buffer.from([0xff, 0x0a])) || bytes.subarray(4, 8).toString() === 'JXL ', 'a JPEG XL file');
      assert.match(out.output!.name, /\.jxl$/);
      assert.deepEqual([(out.data as Record<string, unknown>).format, (out.data as Record<string, unknown>).width], ['jxl', 64]);
    } finally {
      await ws.dispose();
    }
  });
  it('re-encodes at a quality level and keeps the format', async () => {
    const src = await makePhoto(dir, 'p.jpg', 300, 200);
    const q80 = await run(src, {});
    const q30 = await run(src, { quality: 30 });
    assert.equal(q80.meta.format, 'jpeg');
    assert.equal(q80.data.quality, 80);
    assert.ok(q30.size < q80.size && q80.size < statSync(src).size);
    assert.equal(q30.data.size, q30.size);
  });
  it('finds the best JPEG quality under a target size', async () => {
    const src = await makePhoto(dir, 't.jpg', 400, 300);
    const r = await run(src, { mode: 'targetSize', targetSizeKb: 20 });
    assert.ok(r.size <= 20 * 1024, `${r.size}`);
    assert.equal(r.data.targetMet, true);
    assert.ok((r.data.quality as number) > 1 && (r.data.quality as number) < 100);
    assert.deepEqual([r.meta.width, r.meta.height], [400, 300]);
    // One quality step higher would not fit: the search found the best quality.
    const next = await run(src, { quality: (r.data.quality as number) + 1 });
    assert.ok(next.size > 20 * 1024);
  });
  it('meets a target for AVIF at libaom effort 3, the quality mode agreeing', async () => {
    // Effort 4 made a 3 MP AVIF's search (~8 encodes on libaom's one thread) take 141 s.
    const src = path.join(dir, 'a.avif');
    await sharp(await makePhoto(dir, 'a.jpg', 300, 200))
      .avif({ quality: 90, effort: 3 })
      .toFile(src);
    const target = Math.floor(statSync(src).size / 2);
    const r = await run(src, { mode: 'targetSize', targetSizeKb: target / 1024 });
    const q = r.data.quality as number;
    assert.equal(r.data.targetMet, true);
    assert.ok(r.size <= target && q > 1 && q < 100, `${r.size} bytes at quality ${q}`);
    assert.equal(r.meta.format, 'heif');
    const byEffort3 = await sharp(src).avif({ quality: q, effort: 3 }).toBuffer();
    assert.equal(r.size, byEffort3.length, 'encoded at effort 3');
    assert.ok((await run(src, { quality: q + 1 })).size > target, 'quality mode encodes as the search does');
  });
  it('meets a target for WebP and PNG (palette), downscaling when needed', async () => {
    const base = await makePhoto(dir, 'w.jpg', 300, 200);
    const webp = path.join(dir, 'w.webp');
    const png = path.join(dir, 'w.png');
    await sharp(base).webp({ quality: 95 }).toFile(webp);
    await sharp(base).png().toFile(png);
    const w = await run(webp, { mode: 'targetSize', targetSizeKb: 8 });
    assert.ok(w.size <= 8 * 1024 && w.meta.format === 'webp');
    const p = await run(png, { mode: 'targetSize', targetSizeKb: 40 });
    assert.ok(p.size <= 40 * 1024 && p.meta.format === 'png' && p.data.targetMet === true, JSON.stringify(p.data));
    assert.ok(typeof p.data.colours === 'number');
    const tiny = await run(png, { mode: 'targetSize', targetSizeKb: 3 });
    assert.ok(tiny.size <= 3 * 1024 && (tiny.meta.width ?? 0) < 300, JSON.stringify(tiny.data));
  });
  it('keeps PNG lossless when that already fits, or at quality 100', async () => {
    const src = await makeImage(dir, 'flat.png', 200, 100);
    for (const settings of [{ mode: 'targetSize', targetSizeKb: 50 }, { quality: 100 }]) {
      const r = await run(src, settings);
      assert.equal(r.data.quality, 100);
      assert.equal(r.data.colours, undefined);
      assert.ok((await sharp(src).raw().toBuffer()).equals(r.raw), 'pixels unchanged');
    }
  });
  it('returns the smallest result with targetMet false when the target is impossible', async () => {
    const src = await makePhoto(dir, 'x.jpg', 64, 64);
    const r = await run(src, { mode: 'targetSize', targetSizeKb: 0.05 });
    assert.equal(r.data.targetMet, false);
    assert.match(String(r.data.message), /Could not reach/);
    assert.ok(r.size > 51 && r.size < statSync(src).size);
  });
  it('needs targetSizeKb in targetSize mode', async () => {
    const src = await makePhoto(dir, 'y.jpg', 32, 32);
    await assert.rejects(run(src, { mode: 'targetSize' }), (e: KilnError) => e.code === 'VALIDATION_ERROR');
    await assert.rejects(run(src, { quality: 101 }), (e: KilnError) => e.code === 'VALIDATION_ERROR');
  });
  it('runs from the CLI with --target-size-kb', async () => {
    const src = await makePhoto(dir, 'cli.jpg', 300, 200);
    const out = path.join(dir, 'cli-small.jpg');
    const r = await kiln(['compress', src, '--mode', 'targetSize', '--target-size-kb', '12', '-o', out, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const line = JSON.parse(r.stdout.trim().split('\n').pop()!) as { data: { targetMet: boolean; size: number } };
    assert.equal(line.data.targetMet, true);
    assert.equal(statSync(out).size, line.data.size);
    assert.ok(line.data.size <= 12 * 1024);
  });
  it('quality 100 on a PNG of more than 256 colours is lossless (not a palette)', async () => {
    // 32×32 with 1024 different colours: a palette would have to merge them.
    const px = Buffer.alloc(32 * 32 * 3);
    for (let i = 0; i < 32 * 32; i++) px.set([i & 0xff, (i >> 2) & 0xff, (i * 7) & 0xff], i * 3);
    const src = path.join(dir, 'many-colours.png');
    await sharp(px, { raw: { width: 32, height: 32, channels: 3 } })
      .png()
      .toFile(src);
    const r = await run(src, { quality: 100 });
    assert.deepEqual(r.raw, px);
  });
});
