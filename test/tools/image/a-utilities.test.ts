import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import type { KilnError } from '../../../src/core/errors.js';
import { hammingDistance, perceptualHash } from '../../../src/tools/image/_shared/phash.js';
import { kiln } from '../../helpers/cli.js';
import { makePhoto, tempDir } from '../../helpers/fixtures.js';
import { rawOf, runA, solid } from './a-helpers.js';

const dir = tempDir();

describe('compare', () => {
  it('diff marks exactly the pixels above diffThreshold and counts them', async () => {
    const a = await solid(dir, 'a.png', 10, 10, () => [100, 100, 100]);
    const b = await solid(dir, 'b.png', 10, 10, (x, y) =>
      y === 0 && x < 3 ? [130, 100, 100] : y === 1 && x < 5 ? [110, 100, 100] : [100, 100, 100],
    );
    const r = await runA('compare', [a], { diffThreshold: 10 }, { file: [b] }, dir);
    assert.equal(r.data!.differentPixels, 3);
    assert.equal(r.data!.differencePercent, 3);
    const p = await rawOf(r.kept!);
    let red = 0;
    for (let y = 0; y < 10; y++) for (let x = 0; x < 10; x++) if (p.px(x, y).join() === '255,0,0,255') red++;
    assert.equal(red, 3);
    assert.deepEqual(p.px(0, 0), [255, 0, 0, 255]);
    const r2 = await runA('compare', [a], { diffThreshold: 5 }, { file: [b] }, dir);
    assert.equal(r2.data!.differentPixels, 8);
  });
  it('handles different sizes and renders side by side', async () => {
    const a = await solid(dir, 'c.png', 20, 10, () => [0, 0, 0]);
    const b = await solid(dir, 'd.png', 10, 5, () => [0, 0, 0]);
    const r = await runA('compare', [a], {}, { file: [b] }, dir);
    assert.equal(r.data!.resized, true);
    assert.equal(r.data!.differentPixels, 0);
    assert.match(String(r.data!.note), /10×5/);
    const s = await runA('compare', [a], { mode: 'side-by-side' }, { file: [b] }, dir);
    const m = await sharp(s.kept!).metadata();
    assert.deepEqual([m.width, m.height], [38, 10]);
  });
  it('CLI: second file by --target and positionally, JSON data', async () => {
    const a = await solid(dir, 'e.png', 8, 8, () => [0, 0, 0]);
    const b = await solid(dir, 'f.png', 8, 8, (x) => (x === 0 ? [255, 255, 255] : [0, 0, 0]));
    const out = path.join(dir, 'cli-diff.png');
    const res = await kiln(['compare', a, '--target', b, '-o', out, '--json', '-q']);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(JSON.parse(res.stdout.trim().split('\n').pop()!).data.differentPixels, 8);
    const res2 = await kiln(['compare', a, b, '-o', path.join(dir, 'cli-diff2.png'), '--json', '-q']);
    assert.equal(res2.code, 0, res2.stderr);
    assert.equal(JSON.parse(res2.stdout.trim().split('\n').pop()!).data.differentPixels, 8);
  });
});

describe('find-duplicates', () => {
  it('pHash: a resized copy is near, a different image is far', async () => {
    const photo = await makePhoto(dir, 'p.jpg', 320, 240);
    const small = path.join(dir, 'p-small.png');
    await sharp(photo).resize(160, 120).png().toFile(small);
    const other = await solid(dir, 'other.png', 320, 240, (x, y) => (((x >> 5) + (y >> 5)) % 2 ? [255, 255, 255] : [0, 0, 0]));
    const h = await Promise.all([photo, small, other].map((f) => perceptualHash(sharp(f))));
    assert.ok(hammingDistance(h[0]!, h[1]!) <= 4, `copy distance ${hammingDistance(h[0]!, h[1]!)}`);
    assert.ok(hammingDistance(h[0]!, h[2]!) > 20, `different distance ${hammingDistance(h[0]!, h[2]!)}`);
    const broken = path.join(dir, 'broken.png');
    const png = await sharp(other).png().toBuffer();
    writeFileSync(broken, png.subarray(0, 60));
    const r = await runA('find-duplicates', [photo, small, other, broken], {});
    const groups = r.data!.groups as { best: string; files: { name: string; distance: number }[] }[];
    assert.equal(groups.length, 1);
    assert.equal(groups[0]!.best, 'p.jpg');
    assert.deepEqual(groups[0]!.files.map((f) => f.name).sort(), ['p-small.png', 'p.jpg']);
    assert.ok(groups[0]!.files.every((f) => f.distance <= 4));
    assert.equal((r.data!.skipped as unknown[]).length, 1);
    await assert.rejects(runA('find-duplicates', [photo], {}), (e: KilnError) => e.code === 'VALIDATION_ERROR');
  });

  it('reports the size a person sees: an EXIF-rotated JPEG and its upright copy list the same width and height', async () => {
    const rotated = path.join(dir, 'dup-rot6.jpg');
    await sharp(await makePhoto(dir, 'dup-src.jpg', 320, 160))
      .jpeg()
      .withMetadata({ orientation: 6 })
      .toFile(rotated);
    const upright = path.join(dir, 'dup-upright.jpg');
    await sharp(rotated).autoOrient().jpeg().toFile(upright);
    const r = await runA('find-duplicates', [rotated, upright], {});
    const files = (r.data!.groups as { files: { name: string; width: number; height: number }[] }[])[0]!.files;
    for (const f of files) assert.deepEqual([f.name, f.width, f.height], [f.name, 160, 320]);
  });
});

describe('color-palette', () => {
  it('finds the colors and their shares, and writes a swatch when asked', async () => {
    const src = await solid(dir, 'pal.png', 40, 40, (x) => (x < 30 ? [255, 0, 0] : [0, 0, 255]));
    const r = await runA('color-palette', [src], { count: 2, swatch: true }, {}, dir);
    const colors = r.data!.colors as { color: string; share: number }[];
    assert.deepEqual(
      colors.map((c) => c.color),
      ['#ff0000', '#0000ff'],
    );
    assert.ok(Math.abs(colors[0]!.share - 0.75) < 0.03);
    const p = await rawOf(r.kept!);
    assert.deepEqual(p.px(5, 5), [255, 0, 0, 255]);
    assert.deepEqual(p.px(p.width - 2, 5), [0, 0, 255, 255]);
    const rgb = await runA('color-palette', [src], { count: 4, format: 'rgb' });
    assert.equal((rgb.data!.colors as { color: string }[])[0]!.color, 'rgb(255, 0, 0)');
  });
});

describe('histogram', () => {
  it('returns exact per-channel statistics and a chart', async () => {
    const src = await solid(
      dir,
      'hist.png',
      4,
      1,
      (x) =>
        [
          [0, 10, 200],
          [100, 10, 200],
          [200, 10, 200],
          [255, 10, 200],
        ][x] as [number, number, number],
    );
    const r = await runA('histogram', [src], { scale: 'log' }, {}, dir);
    const red = (r.data!.channels as Record<string, Record<string, number>>).red!;
    assert.deepEqual([red.min, red.max, red.median, red.mean], [0, 255, 100, 138.75]);
    assert.ok(Math.abs(red.stddev! - 97.492) < 0.01);
    assert.equal((r.data!.channels as Record<string, Record<string, number>>).green!.stddev, 0);
    const m = await sharp(r.kept!).metadata();
    assert.equal(m.format, 'png');
    assert.ok(m.width! > 500);
  });
});
