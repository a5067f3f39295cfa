import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { getTool } from '../../../src/tools/index.js';
import { runTool, inputFile } from '../../../src/tools/run-tool.js';
import { createWorkspace } from '../../../src/core/workspace.js';
import type { KilnError } from '../../../src/core/errors.js';
import { makeImage, tempDir } from '../../helpers/fixtures.js';
import { kiln } from '../../helpers/cli.js';

const dir = tempDir();

async function run(file: string, settings: Record<string, unknown>) {
  const ws = await createWorkspace();
  try {
    const out = await runTool(getTool('crop'), { files: [await inputFile(file)], extra: {} }, settings, { workDir: ws.dir, dataDir: dir });
    const p = out.output!.path;
    return { out, meta: await sharp(p, { animated: true }).metadata(), px: await sharp(p).raw().toBuffer({ resolveWithObject: true }) };
  } finally {
    await ws.dispose();
  }
}

async function animation(name: string, format: 'gif' | 'webp'): Promise<string> {
  const frames = await Promise.all(
    [0, 1, 2].map((i) =>
      sharp({ create: { width: 40, height: 30, channels: 4, background: { r: 80 * i, g: 200, b: 0, alpha: 1 } } })
        .png()
        .toBuffer(),
    ),
  );
  const p = path.join(dir, name);
  await sharp(frames, { join: { animated: true } })
    [format]({ delay: [100, 100, 100], loop: 0 })
    .toFile(p);
  return p;
}

describe('crop', () => {
  it('cuts a pixel region (right half is blue)', async () => {
    const src = await makeImage(dir, 'a.png', 200, 100);
    const { meta, px } = await run(src, { left: 110, top: 10, width: 50, height: 40 });
    assert.deepEqual([meta.width, meta.height, meta.format], [50, 40, 'png']);
    assert.deepEqual([...px.data.subarray(0, 3)], [0, 0, 255]);
  });
  it('takes percent', async () => {
    const src = await makeImage(dir, 'b.jpg', 200, 100);
    const { meta, px } = await run(src, { left: 0, top: 0, width: 25, height: 50, unit: 'percent' });
    assert.deepEqual([meta.width, meta.height, meta.format], [50, 50, 'jpeg']);
    assert.ok(px.data[0]! > 200 && px.data[2]! < 50, 'left part is red');
  });
  it('refuses a region outside the image and names the image size', async () => {
    const src = await makeImage(dir, 'c.png', 200, 100);
    await assert.rejects(
      run(src, { left: 150, top: 0, width: 100, height: 10 }),
      (e: KilnError) => e.code === 'VALIDATION_ERROR' && /200×100/.test(e.message),
    );
    await assert.rejects(run(src, { left: 0, top: 0, width: 0, height: 10 }), (e: KilnError) => e.code === 'VALIDATION_ERROR');
    await assert.rejects(
      run(src, { left: 60, top: 0, width: 50, height: 10, unit: 'percent' }),
      (e: KilnError) => e.code === 'VALIDATION_ERROR',
    );
  });
  it('keeps GIF and WebP animations animated', async () => {
    for (const f of ['gif', 'webp'] as const) {
      const src = await animation(`anim.${f}`, f);
      const { meta } = await run(src, { left: 5, top: 5, width: 20, height: 10 });
      assert.equal(meta.pages, 3, f);
      assert.deepEqual([meta.width, meta.pageHeight, meta.format], [20, 10, f]);
    }
  });
  it('uses the displayed orientation of EXIF-rotated photos', async () => {
    const p = path.join(dir, 'rot.jpg');
    // Stored 200×100, orientation 6 = shown 100×200.
    await sharp(await makeImage(dir, 'rot-src.png', 200, 100))
      .withMetadata({ orientation: 6 })
      .jpeg()
      .toFile(p);
    const { meta } = await run(p, { left: 0, top: 150, width: 100, height: 50 });
    assert.deepEqual([meta.width, meta.height], [100, 50]);
    await assert.rejects(run(p, { left: 0, top: 0, width: 150, height: 10 }), (e: KilnError) => /100×200/.test(e.message));
  });
  it('runs from the CLI with --unit percent', async () => {
    const src = await makeImage(dir, 'cli.png', 200, 100);
    const out = path.join(dir, 'cli-out.png');
    const r = await kiln(['crop', src, '--unit', 'percent', '--left', '50', '--top', '0', '--width', '50', '--height', '100', '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    const m = await sharp(out).raw().toBuffer({ resolveWithObject: true });
    assert.deepEqual([m.info.width, m.info.height], [100, 100]);
    assert.deepEqual([...m.data.subarray(0, 3)], [0, 0, 255]);
    const bad = await kiln(['crop', src, '--left', '190', '--top', '0', '--width', '20', '--height', '10', '-o', path.join(dir, 'x.png')]);
    assert.equal(bad.code, 2);
  });
});
