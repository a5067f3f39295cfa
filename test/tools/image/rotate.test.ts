import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { getTool } from '../../../src/tools/index.js';
import { runTool, inputFile } from '../../../src/tools/run-tool.js';
import { createWorkspace } from '../../../src/core/workspace.js';
import { makeImage, tempDir } from '../../helpers/fixtures.js';
import { kiln } from '../../helpers/cli.js';

const dir = tempDir();

async function run(file: string, settings: Record<string, unknown>) {
  const ws = await createWorkspace();
  try {
    const out = await runTool(getTool('rotate'), { files: [await inputFile(file)], extra: {} }, settings, {
      workDir: ws.dir,
      dataDir: dir,
    });
    const p = out.output!.path;
    const raw = await sharp(p).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    const at = (x: number, y: number) => [...raw.data.subarray((y * raw.info.width + x) * 4, (y * raw.info.width + x) * 4 + 4)];
    return { meta: await sharp(p, { animated: true }).metadata(), at, w: raw.info.width, h: raw.info.height };
  } finally {
    await ws.dispose();
  }
}

const isRed = (p: number[]) => p[0]! > 200 && p[2]! < 60;
const isBlue = (p: number[]) => p[2]! > 200 && p[0]! < 60;

describe('rotate', () => {
  it('turns 90° clockwise (left half goes to the top)', async () => {
    const src = await makeImage(dir, 'a.png', 200, 100);
    const r = await run(src, { angle: 90 });
    assert.deepEqual([r.w, r.h], [100, 200]);
    assert.ok(isRed(r.at(50, 10)) && isBlue(r.at(50, 190)));
  });
  it('applies the rotation before the flips', async () => {
    const src = await makeImage(dir, 'b.png', 200, 100);
    const r = await run(src, { angle: 90, vertical: true });
    assert.ok(isBlue(r.at(50, 10)) && isRed(r.at(50, 190)), 'vertical flip of the rotated picture puts blue on top');
    const h = await run(src, { horizontal: true });
    assert.ok(isBlue(h.at(5, 50)) && isRed(h.at(195, 50)));
    const neg = await run(src, { angle: -270 });
    assert.ok(isRed(neg.at(50, 10)), '-270 equals 90');
  });
  it('gives a transparent background with alpha formats and white in JPEG for free angles', async () => {
    const png = await run(await makeImage(dir, 'c.png', 100, 100), { angle: 45 });
    assert.ok(png.w > 140 && png.w < 144);
    assert.equal(png.at(1, 1)[3], 0);
    assert.ok(isRed(png.at(40, Math.round(png.h / 2))));
    const jpg = await run(await makeImage(dir, 'c.jpg', 100, 100), { angle: 30 });
    assert.ok(
      jpg
        .at(1, 1)
        .slice(0, 3)
        .every((v) => v > 240),
      'white corner',
    );
  });
  it('keeps an animated GIF animated', async () => {
    const frames = await Promise.all(
      [0, 1, 2].map((i) =>
        sharp({ create: { width: 40, height: 20, channels: 4, background: { r: 100 * i, g: 0, b: 200, alpha: 1 } } })
          .png()
          .toBuffer(),
      ),
    );
    const src = path.join(dir, 'anim.gif');
    await sharp(frames, { join: { animated: true } })
      .gif({ delay: [120, 120, 120] })
      .toFile(src);
    const r = await run(src, { angle: 90, horizontal: true });
    assert.deepEqual([r.meta.pages, r.meta.width, r.meta.pageHeight, r.meta.format], [3, 20, 40, 'gif']);
    assert.deepEqual(r.meta.delay, [120, 120, 120]);
  });
  it('runs from the CLI with --angle and --horizontal', async () => {
    const src = await makeImage(dir, 'cli.jpg', 200, 100);
    const out = path.join(dir, 'cli-out.jpg');
    const r = await kiln(['rotate', src, '--angle', '180', '--horizontal', '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    const raw = await sharp(out).raw().toBuffer({ resolveWithObject: true });
    assert.deepEqual([raw.info.width, raw.info.height], [200, 100]);
    // 180° then a mirror = vertical flip only: red stays on the left.
    assert.ok(raw.data[0 + 10 * 3]! > 200);
  });
});
