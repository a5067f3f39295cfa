import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { getTool } from '../../../src/tools/index.js';
import { runTool, inputFile } from '../../../src/tools/run-tool.js';
import { createWorkspace } from '../../../src/core/workspace.js';
import type { KilnError } from '../../../src/core/errors.js';
import { makePhoto, tempDir } from '../../helpers/fixtures.js';
import { kiln } from '../../helpers/cli.js';

const dir = tempDir();

async function solid(name: string, r: number, g: number, b: number, alpha?: number): Promise<string> {
  const p = path.join(dir, name);
  const channels = alpha === undefined ? 3 : 4;
  await sharp({ create: { width: 16, height: 16, channels, background: { r, g, b, ...(alpha === undefined ? {} : { alpha }) } } })
    .png()
    .toFile(p);
  return p;
}

async function run(file: string, settings: Record<string, unknown>) {
  const ws = await createWorkspace();
  try {
    const out = await runTool(getTool('adjust-colors'), { files: [await inputFile(file)], extra: {} }, settings, {
      workDir: ws.dir,
      dataDir: dir,
    });
    const raw = await sharp(out.output!.path).raw().toBuffer({ resolveWithObject: true });
    const stats = await sharp(out.output!.path).stats();
    return {
      px: [...raw.data.subarray(0, raw.info.channels)],
      channels: raw.info.channels,
      means: stats.channels.map((c) => c.mean),
      format: (await sharp(out.output!.path).metadata()).format,
    };
  } finally {
    await ws.dispose();
  }
}

describe('adjust-colors', () => {
  it('invert turns pure red into cyan', async () => {
    const r = await run(await solid('red.png', 255, 0, 0), { effect: 'invert' });
    assert.deepEqual(r.px, [0, 255, 255]);
  });
  it('grayscale gives r = g = b, sepia a warm tone', async () => {
    const src = await makePhoto(dir, 'p.jpg', 64, 48);
    const g = await run(src, { effect: 'grayscale' });
    assert.equal(g.format, 'jpeg');
    assert.ok(g.channels === 1 || (g.px[0] === g.px[1] && g.px[1] === g.px[2]));
    const s = await run(await solid('grey.png', 128, 128, 128), { effect: 'sepia' });
    assert.ok(s.px[0]! > s.px[1]! && s.px[1]! > s.px[2]!, `${s.px}`);
  });
  it('brightness and exposure raise the mean, contrast spreads values', async () => {
    const src = await solid('mid.png', 100, 100, 100);
    const base = (await run(src, {})).px[0]!;
    assert.equal(base, 100);
    assert.ok((await run(src, { brightness: 50 })).px[0]! > 150);
    assert.ok((await run(src, { brightness: -50 })).px[0]! < 50);
    assert.ok((await run(src, { exposure: 50 })).px[0]! === 200);
    assert.ok((await run(src, { contrast: 50 })).px[0]! < 100, 'dark grey gets darker with contrast');
    assert.ok((await run(await solid('light.png', 180, 180, 180), { contrast: 50 })).px[0]! > 180);
  });
  it('temperature, tint and channel levels move the right channels', async () => {
    const src = await solid('g.png', 128, 128, 128);
    const warm = await run(src, { temperature: 100 });
    assert.ok(warm.px[0]! > 150 && warm.px[2]! < 100 && warm.px[1] === 128);
    const magenta = await run(src, { tint: 100 });
    assert.ok(magenta.px[1]! < 100 && magenta.px[0]! > 128);
    const lv = await run(src, { red: 0, blue: 200 });
    assert.deepEqual(lv.px, [0, 128, 255]);
  });
  it('saturation -100 removes colour, hue rotates it, alpha survives', async () => {
    const red = await solid('r.png', 200, 30, 30);
    const grey = await run(red, { saturation: -100 });
    assert.ok(Math.abs(grey.px[0]! - grey.px[1]!) <= 2 && Math.abs(grey.px[1]! - grey.px[2]!) <= 2, `${grey.px}`);
    const turned = await run(red, { hue: 120 });
    assert.ok(turned.px[1]! > turned.px[0]! && turned.px[1]! > turned.px[2]!, `${turned.px}`);
    const half = await run(await solid('a.png', 255, 0, 0, 0.5), { effect: 'invert', brightness: 0 });
    assert.deepEqual([half.channels, half.px[3]], [4, 128]);
    assert.deepEqual(half.px.slice(0, 3), [0, 255, 255]);
  });
  it('sharpness increases local contrast', async () => {
    const src = await makePhoto(dir, 's.jpg', 64, 48);
    const before = await sharp(src).stats();
    const ws = await createWorkspace();
    try {
      const out = await runTool(
        getTool('adjust-colors'),
        { files: [await inputFile(src)], extra: {} },
        { sharpness: 100 },
        { workDir: ws.dir, dataDir: dir },
      );
      const after = await sharp(out.output!.path).stats();
      assert.ok(after.channels[0]!.stdev > before.channels[0]!.stdev);
    } finally {
      await ws.dispose();
    }
    await assert.rejects(run(src, { hue: 200 }), (e: KilnError) => e.code === 'VALIDATION_ERROR');
  });
  it('runs from the CLI with --effect invert', async () => {
    const src = await solid('cli.png', 255, 0, 0);
    const out = path.join(dir, 'cli-out.png');
    const r = await kiln(['adjust-colors', src, '--effect', 'invert', '--brightness', '0', '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual([...(await sharp(out).raw().toBuffer()).subarray(0, 3)], [0, 255, 255]);
  });
  it('adjusts a greyscale image (one band) instead of failing', async () => {
    const p = path.join(dir, 'grey.png');
    await sharp({ create: { width: 16, height: 16, channels: 3, background: { r: 100, g: 100, b: 100 } } })
      .toColourspace('b-w')
      .png()
      .toFile(p);
    assert.equal((await sharp(p).metadata()).channels, 1);
    const r = await run(p, { brightness: 20 });
    assert.ok(r.means[0]! > 120, `brighter: ${r.means[0]}`);
  });
});
