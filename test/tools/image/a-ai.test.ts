import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import type { KilnError } from '../../../src/core/errors.js';
import { tempDir } from '../../helpers/fixtures.js';
import { runA, solid } from './a-helpers.js';

const dir = tempDir();

async function means(file: string): Promise<number[]> {
  const st = await sharp(file).stats();
  return st.channels.slice(0, 3).map((c) => c.mean);
}

describe('image-enhancement', () => {
  // A dark, blue-cast, low-contrast scene with some structure.
  const scene = () =>
    solid(dir, `dark-${Math.random()}.png`, 160, 120, (x, y) => {
      const v = 30 + ((x * 7 + y * 3) % 40) + (x > 80 ? 15 : 0);
      return [v * 0.7, v * 0.85, v * 1.3];
    });

  it('brightens, stretches and neutralises a dark blue-cast image', async () => {
    const src = await scene();
    const before = await means(src);
    const r = await runA('image-enhancement', [src], { intensity: 100 }, {}, dir);
    const after = await means(r.kept!);
    const lum = (m: number[]) => 0.2126 * m[0]! + 0.7152 * m[1]! + 0.0722 * m[2]!;
    assert.ok(lum(after) > lum(before) + 30, `brighter: ${lum(before)} -> ${lum(after)}`);
    const cast = (m: number[]) => m[2]! / m[0]!;
    assert.ok(cast(after) < cast(before) - 0.3, `less blue: ${cast(before)} -> ${cast(after)}`);
    const applied = r.data!.applied as Record<string, unknown>;
    for (const k of ['exposure', 'contrast', 'whiteBalance']) assert.ok(k in applied, `${k} applied`);
  });
  it('catalog single-correction modes, corrections flags, strength alias and intensity 0', async () => {
    const src = await scene();
    const onlyContrast = await runA('image-enhancement', [src], { mode: 'contrast' });
    assert.deepEqual(Object.keys(onlyContrast.data!.applied as object), ['contrast']);
    const noExposure = await runA('image-enhancement', [src], { corrections: { exposure: false, whiteBalance: false } });
    const keys = Object.keys(noExposure.data!.applied as object);
    assert.ok(!keys.includes('exposure') && !keys.includes('whiteBalance') && keys.includes('contrast'), keys.join());
    const zero = await runA('image-enhancement', [src], { strength: 0, corrections: { denoise: false } }, {}, dir);
    assert.equal(zero.data!.intensity, 0);
    assert.deepEqual(await sharp(zero.kept!).raw().toBuffer(), await sharp(src).raw().toBuffer());
    await assert.rejects(
      runA('image-enhancement', [src], { corrections: { blur: true } }),
      (e: KilnError) => e.code === 'VALIDATION_ERROR',
    );
  });
  it('deepEnhance without its bundle runs the classical path and says so', async () => {
    const src = await scene();
    const r = await runA('image-enhancement', [src], { deepEnhance: true, mode: 'low-light' });
    const d = r.data!.deepEnhance as { applied: boolean; reason: string };
    assert.equal(d.applied, false);
    assert.match(d.reason, /upscale-enhance/);
    assert.ok(Object.keys(r.data!.applied as object).length > 0);
  });
});
