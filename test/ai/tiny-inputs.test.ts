/**
 * Images smaller than a filter window (1×1, 2×3, a 2 px wide strip): libvips refuses a median or CLAHE
 * window larger than the image ("rank: window too large"), which reached users as INTERNAL. The
 * AI tools' classical steps must run on them and keep the size.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { medianRaw } from '../../src/engines/sharp.js';
import { png, run } from './inpaint-fixtures.js';

/** Deterministic noisy pixels, so the denoising steps have something to do. */
function noisy(n: number, seed = 3): Buffer {
  let s = seed;
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    b[i] = s % 256;
  }
  return b;
}

async function sizeOf(file: string | undefined) {
  assert.ok(file, 'an output file');
  const m = await sharp(file).metadata();
  return `${m.width}x${m.height}`;
}

describe('images smaller than a filter window', () => {
  it('medianRaw: a window larger than the image takes the median over repeated edge pixels', async () => {
    // 1×3 column 10, 200, 30 with a 3×3 window and edges repeated: each output pixel's window holds
    // three columns of its row's neighbours, so the median is the median of the column neighbourhood.
    const out = await medianRaw(Uint8Array.from([10, 200, 30]), { width: 1, height: 3, channels: 1 }, 3);
    assert.deepEqual([...out], [10, 30, 30]);
    // The usual path on a large enough image is the plain libvips median.
    const big = noisy(8 * 8);
    const plain = await sharp(big, { raw: { width: 8, height: 8, channels: 1 } })
      .median(3)
      .extractChannel(0)
      .raw()
      .toBuffer();
    assert.deepEqual(await medianRaw(big, { width: 8, height: 8, channels: 1 }, 3), plain);
  });

  it('medianRaw keeps grey with alpha as two bands (sharp answers four)', async () => {
    // Grey 10/200/30 with alpha 255/0/128 in a 1×3 column.
    const out = await medianRaw(Uint8Array.from([10, 255, 200, 0, 30, 128]), { width: 1, height: 3, channels: 2 }, 3);
    assert.deepEqual([...out], [10, 255, 30, 128, 30, 128]);
  });

  it('sharpening denoises (median up to 7×7) a 2×3 image', async () => {
    for (const denoise of ['light', 'strong']) {
      const file = await png(`tiny-sharpen-${denoise}.png`, noisy(2 * 3 * 3), 2, 3);
      const r = await run('sharpening', file, { denoise });
      assert.equal(await sizeOf(r.file), '2x3');
    }
  });

  it('restore-photo (classical scratch detection, 7×7 median) runs on 1×1, 2×3 and 2×40 images', async () => {
    for (const [W, H] of [
      [1, 1],
      [2, 3],
      [2, 40],
    ] as const) {
      const file = await png(`tiny-${W}x${H}.png`, noisy(W * H * 3), W, H);
      const r = await run('restore-photo', file, {});
      assert.equal(await sizeOf(r.file), `${W}x${H}`);
    }
  });

  it('image-enhancement denoises (5×5 median) a noisy 4×40 strip', async () => {
    const file = await png('tiny-noisy-4x40.png', noisy(4 * 40 * 3), 4, 40);
    const r = await run('image-enhancement', file, { intensity: 100 });
    assert.equal((r.data as { applied: { denoise?: { median: number } } }).applied.denoise?.median, 5);
    assert.equal(await sizeOf(r.file), '4x40');
  });

  it('ocr with enhance (3×3 median, CLAHE) reads a 1×1 and a 2×3 image as no text', async () => {
    for (const [W, H] of [
      [1, 1],
      [2, 3],
    ] as const) {
      const file = await png(`tiny-ocr-${W}x${H}.png`, Buffer.alloc(W * H * 3, 255), W, H);
      const r = await run('ocr', file, { quality: 'fast', enhance: true });
      const data = r.data as { text: string; width: number; height: number };
      assert.equal(data.text, '');
      assert.deepEqual([data.width, data.height], [W, H]);
    }
  });
});
