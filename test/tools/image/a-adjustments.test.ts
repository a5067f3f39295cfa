import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KilnError } from '../../../src/core/errors.js';
import { tempDir } from '../../helpers/fixtures.js';
import { rawOf, runA, solid } from './a-helpers.js';

const dir = tempDir();
const close = (a: number, b: number, tol = 2) => Math.abs(a - b) <= tol;

describe('sharpening', () => {
  it('every method raises edge contrast of a soft edge; denoise removes a speck', async () => {
    const src = await solid(dir, 'edge.png', 40, 20, (x) => {
      const v = x < 18 ? 80 : x > 21 ? 170 : 80 + (x - 17) * 18;
      return [v, v, v];
    });
    for (const settings of [{}, { method: 'unsharp-mask', amount: 200, radius: 2 }, { method: 'high-pass', strength: 80, kernelSize: 5 }]) {
      const r = await runA('sharpening', [src], settings, {}, dir);
      const p = await rawOf(r.kept!);
      assert.ok(p.px(17, 10)[0]! < 80 - 3, `dark side undershoots with ${JSON.stringify(settings)}: ${p.px(17, 10)[0]}`);
      assert.ok(p.px(22, 10)[0]! > 170 + 3, `bright side overshoots with ${JSON.stringify(settings)}: ${p.px(22, 10)[0]}`);
    }
    const speck = await solid(dir, 'speck.png', 20, 20, (x, y) => (x === 10 && y === 10 ? [255, 255, 255] : [50, 50, 50]));
    const r = await runA('sharpening', [speck], { method: 'unsharp-mask', amount: 0, denoise: 'light' }, {}, dir);
    assert.equal((await rawOf(r.kept!)).px(10, 10)[0], 50);
  });
  it('unsharp threshold leaves small differences alone; bad kernel size is rejected', async () => {
    const src = await solid(dir, 'low.png', 20, 20, (x) => (x < 10 ? [100, 100, 100] : [104, 104, 104]));
    const r = await runA('sharpening', [src], { method: 'unsharp-mask', amount: 500, threshold: 10 }, {}, dir);
    const p = await rawOf(r.kept!);
    assert.deepEqual([p.px(9, 5)[0], p.px(10, 5)[0]], [100, 104]);
    await assert.rejects(runA('sharpening', [src], { kernelSize: 7 }), (e: KilnError) => e.code === 'VALIDATION_ERROR');
  });
});

describe('replace-color', () => {
  it('recolors within tolerance only, and makes JPEG matches transparent as PNG', async () => {
    const src = await solid(dir, 'rc.png', 30, 10, (x) => (x < 10 ? [250, 10, 5] : x < 20 ? [200, 60, 60] : [0, 0, 255]));
    const r = await runA('replace-color', [src], { tolerance: 20 }, {}, dir);
    const p = await rawOf(r.kept!);
    assert.deepEqual(p.px(2, 2), [0, 255, 0, 255]);
    assert.deepEqual(p.px(12, 2), [200, 60, 60, 255]);
    assert.equal(r.data!.matchedPixels, 100);
    const jpg = await solid(dir, 'white.jpg', 20, 10, (x) => (x < 10 ? [255, 255, 255] : [0, 0, 0]));
    const t = await runA('replace-color', [jpg], { sourceColor: '#ffffff', makeTransparent: true, tolerance: 10 }, {}, dir);
    assert.match(t.output!.name, /\.png$/);
    const q = await rawOf(t.kept!);
    assert.equal(q.px(2, 2)[3], 0);
    assert.equal(q.px(15, 2)[3], 255);
    await assert.rejects(runA('replace-color', [src], { sourceColor: 'reddish' }), (e: KilnError) => e.code === 'VALIDATION_ERROR');
  });
});

describe('color-blindness', () => {
  it('applies the Machado matrices in linear RGB and the monochromacies', async () => {
    const src = await solid(
      dir,
      'cb.png',
      4,
      1,
      (x) =>
        [
          [255, 0, 0],
          [0, 255, 0],
          [0, 0, 255],
          [255, 255, 255],
        ][x] as [number, number, number],
    );
    const prot = await rawOf((await runA('color-blindness', [src], { simulationType: 'protanopia' }, {}, dir)).kept!);
    // Pure red through the protanopia matrix: linear (0.152286, 0.114503, ~0) -> sRGB.
    assert.ok(close(prot.px(0, 0)[0]!, 109) && close(prot.px(0, 0)[1]!, 95) && prot.px(0, 0)[2]! <= 2, `red: ${prot.px(0, 0)}`);
    assert.deepEqual(prot.px(3, 0).slice(0, 3), [255, 255, 255]);
    const deutA = await rawOf((await runA('color-blindness', [src], {}, {}, dir)).kept!);
    assert.ok(deutA.px(0, 0)[0]! > prot.px(0, 0)[0]!, 'the 0.6 anomaly keeps more red than protanopia');
    const achro = await rawOf((await runA('color-blindness', [src], { simulationType: 'achromatopsia' }, {}, dir)).kept!);
    const g = achro.px(1, 0);
    assert.ok(g[0] === g[1] && g[1] === g[2] && close(g[0]!, 220), `green luminance: ${g}`);
    const bcm = await rawOf((await runA('color-blindness', [src], { simulationType: 'blueConeMonochromacy' }, {}, dir)).kept!);
    assert.ok(bcm.px(2, 0)[0]! > 200 && bcm.px(0, 0)[0]! < 60, `blue bright, red dark: ${bcm.px(2, 0)} ${bcm.px(0, 0)}`);
  });
});

describe('duotone / pixelate / vignette', () => {
  it('duotone maps black and white to shadow and highlight; intensity 0 is identity', async () => {
    const src = await solid(dir, 'dt.png', 2, 1, (x) => (x ? [255, 255, 255] : [0, 0, 0]));
    const p = await rawOf((await runA('duotone', [src], {}, {}, dir)).kept!);
    assert.deepEqual(p.px(0, 0).slice(0, 3), [0x1e, 0x3a, 0x8a]);
    assert.deepEqual(p.px(1, 0).slice(0, 3), [0xfb, 0xbf, 0x24]);
    const q = await rawOf((await runA('duotone', [src], { intensity: 0 }, {}, dir)).kept!);
    assert.deepEqual(q.px(1, 0).slice(0, 3), [255, 255, 255]);
  });
  it('pixelate averages whole blocks, only inside the region', async () => {
    const src = await solid(dir, 'px.png', 8, 8, (x, y) => ((x + y) % 2 ? [200, 0, 0] : [0, 0, 100]));
    const p = await rawOf(
      (await runA('pixelate', [src], { blockSize: 4, region: { left: 0, top: 0, width: 4, height: 8 } }, {}, dir)).kept!,
    );
    assert.deepEqual(p.px(1, 1).slice(0, 3), [100, 0, 50]);
    assert.deepEqual(p.px(5, 1).slice(0, 3), [0, 0, 100]);
    assert.deepEqual(p.px(6, 1).slice(0, 3), [200, 0, 0]);
    await assert.rejects(
      runA('pixelate', [src], { region: { left: 50, top: 0, width: 4, height: 4 } }),
      (e: KilnError) => e.code === 'VALIDATION_ERROR',
    );
  });
  it('pixelate weights colours by alpha: transparent pixels do not darken a cut-out', async () => {
    // Left half red and opaque, right half transparent black: the 4×4 block is half covered.
    const src = await solid(dir, 'px-alpha.png', 4, 4, (x) => (x < 2 ? [255, 0, 0, 255] : [0, 0, 0, 0]));
    const p = await rawOf((await runA('pixelate', [src], { blockSize: 4 }, {}, dir)).kept!);
    assert.deepEqual(p.px(0, 0), [255, 0, 0, 128]);
  });
  it('vignette darkens the corners, not the center, and follows centerX', async () => {
    const src = await solid(dir, 'vg.png', 100, 60, () => [200, 200, 200]);
    const p = await rawOf((await runA('vignette', [src], { strength: 1 }, {}, dir)).kept!);
    assert.deepEqual(p.px(50, 30).slice(0, 3), [200, 200, 200]);
    assert.ok(p.px(0, 0)[0]! < 10, `corner ${p.px(0, 0)}`);
    const q = await rawOf((await runA('vignette', [src], { strength: 1, centerX: 0, color: '#ff0000' }, {}, dir)).kept!);
    assert.deepEqual(q.px(1, 30).slice(0, 3), [200, 200, 200]);
    assert.ok(q.px(99, 0)[0]! > 240 && q.px(99, 0)[1]! < 20);
  });
});
