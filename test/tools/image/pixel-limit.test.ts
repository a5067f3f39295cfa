/**
 * The one "output would exceed KILN_MAX_PIXELS" refusal (src/tools/image/_shared/pixel-limit.ts) at each
 * place that makes a raster: the CLI runs with the limit lowered, so small fixtures are "too large".
 * resize is in resize.test.ts, upscale in test/ai/upscale.test.ts, pdf-to-image in test/tools/pdf/content.test.ts.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { PDFDocument } from '@cantoo/pdf-lib';
import sharp from 'sharp';
import { exec } from '../../../src/core/process.js';
import { kiln } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/fixtures.js';

const dir = tempDir('kiln-pixel-limit-');

/** Runs `kiln args -o <new folder>/ --json` under KILN_MAX_PIXELS=limit and returns the refusal, checking nothing was written. */
async function refusal(args: string[], limit?: number): Promise<{ message: string; details: Record<string, unknown> }> {
  const out = path.join(dir, `out-${Math.random().toString(36).slice(2)}`);
  const res = await kiln([...args, '-o', `${out}/`, '--json'], { env: limit ? { KILN_MAX_PIXELS: String(limit) } : {} });
  assert.equal(res.code, 2, `${args.join(' ')}: ${res.stdout} ${res.stderr}`);
  const { error } = JSON.parse(res.stdout) as { error: { code: string; message: string; details: Record<string, unknown> } };
  assert.equal(error.code, 'LIMIT_EXCEEDED', error.message);
  assert.deepEqual(existsSync(out) ? readdirSync(out) : [], [], 'no output was written');
  return error;
}

/** A GIF of `frames` frames of `size` (ffmpeg testsrc, 20x20 unless said). */
async function gif(name: string, frames: number, size = '20x20'): Promise<string> {
  const file = path.join(dir, name);
  const src = `testsrc=size=${size}:rate=10`;
  await exec('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', src, '-frames:v', String(frames), '-loop', '0', file]);
  return file;
}

async function png(name: string, width: number, height: number): Promise<string> {
  const file = path.join(dir, name);
  await sharp({ create: { width, height, channels: 3, background: '#2050c0' } })
    .png()
    .toFile(file);
  return file;
}

describe('output over a format’s side limit', () => {
  it('pdf-to-image and convert: LIMIT_EXCEEDED naming the format and its limit (it was INTERNAL, in sharp’s words)', async () => {
    // 10 × 8000 pt at 600 dpi is 84 × 66667 pixels: 5.6 MP, within KILN_MAX_PIXELS, but taller than JPEG and WebP go.
    const doc = await PDFDocument.create();
    doc.addPage([10, 8000]);
    const tall = path.join(dir, 'tall.pdf');
    writeFileSync(tall, await doc.save());
    for (const [format, side] of [
      ['jpg', 65535],
      ['webp', 16383],
    ] as const) {
      const e = await refusal(['pdf-to-image', tall, '--dpi', '600', '--format', format]);
      const name = format === 'jpg' ? 'JPEG' : 'WebP';
      assert.equal(
        e.message,
        `The image is too large for ${name}, which holds at most ${side} pixels a side: make it smaller, or choose PNG or TIFF.`,
      );
    }
    const strip = await png('strip.png', 20, 17000);
    const e = await refusal(['convert', strip, '--format', 'webp']);
    assert.match(e.message, /too large for WebP, which holds at most 16383 pixels a side/);
    // PNG holds it.
    const out = path.join(dir, 'tall.png');
    const res = await kiln(['pdf-to-image', tall, '--dpi', '600', '--format', 'png', '-o', out]);
    assert.equal(res.code, 0, res.stderr);
    assert.equal((await sharp(out).metadata()).height, 66667);
  });
});

describe('output over the pixel limit', () => {
  it('svg-to-raster: a render over KILN_MAX_PIXELS, and a side no format holds', async () => {
    const svg = path.join(dir, 's.svg');
    writeFileSync(svg, '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10" fill="red"/></svg>');
    const e = await refusal(['svg-to-raster', svg, '--width', '200'], 10000);
    assert.equal(e.message, 'The rendered image would be 200×200 pixels (0.04 MP), above the limit of 0.01 MP (KILN_MAX_PIXELS=10000).');
    assert.deepEqual(e.details, { width: 200, height: 200, frames: 1, pixels: 40000, limit: 10000, maxSide: 65535 });
    const side = await refusal(['svg-to-raster', svg, '--width', '65536', '--height', '1']);
    assert.equal(side.message, 'The rendered image would be 65536×1 pixels, a side longer than the 65535 pixels image formats hold.');
  });

  it('layout canvases (stitch): over KILN_MAX_PIXELS, and a side no format holds', async () => {
    const sq = await png('sq.png', 60, 60);
    const e = await refusal(['stitch', sq, sq, sq], 10000);
    assert.equal(e.message, 'The output would be 180×60 pixels (0.0108 MP), above the limit of 0.01 MP (KILN_MAX_PIXELS=10000).');
    const line = await png('line.png', 40000, 1);
    const side = await refusal(['stitch', line, line]);
    assert.match(side.message, /^The output would be 80000×1 pixels, a side longer than the 65535 pixels/);
    // Under both: made, at the size asked.
    const ok = path.join(dir, 'stitched.png');
    const res = await kiln(['stitch', sq, sq, '-o', ok], { env: { KILN_MAX_PIXELS: '10000' } });
    assert.equal(res.code, 0, res.stderr);
    const meta = await sharp(ok).metadata();
    assert.deepEqual([meta.width, meta.height], [120, 60]);
  });

  it('gif-tools: the decoded animation counts every frame (said in the message), not sharp’s bare refusal', async () => {
    const anim = await gif('anim120.gif', 120);
    const e = await refusal(['gif-tools', anim, '--action', 'reverse'], 10000);
    assert.equal(
      e.message,
      'The decoded animation would be 20×20 pixels × 120 frames (0.048 MP), above the limit of 0.01 MP (KILN_MAX_PIXELS=10000).',
    );
  });

  it('gif-tools resize: frames are counted, and a long animation is not refused for the height of all its frames stacked', async () => {
    const anim = await gif('anim120b.gif', 120);
    // 20×20 × 120 = 48000 decodes under 60000; 30×30 × 120 = 108000 does not.
    const e = await refusal(['gif-tools', anim, '--action', 'resize', '--width', '30'], 60000);
    assert.equal(
      e.message,
      'The resized animation would be 30×30 pixels × 120 frames (0.108 MP), above the limit of 0.06 MP (KILN_MAX_PIXELS=60000).',
    );
    // Frames 600 high, 120 of them, stack to 72000 rows, longer than the 65535 a side may be: it was refused
    // as 600×72000 "more than allowed", though each frame is small. Narrow frames (30×600 × 120, 2.2 MP)
    // show it as well as the square 600×600 it was found with (43 MP of GIF encoding, 30 s of the suite).
    const tall = await gif('tall120.gif', 120, '10x200');
    const big = path.join(dir, 'big.gif');
    const res = await kiln(['gif-tools', tall, '--action', 'resize', '--width', '30', '-o', big]);
    assert.equal(res.code, 0, res.stderr);
    const meta = await sharp(big, { animated: true }).metadata();
    assert.deepEqual([meta.width, meta.pageHeight, meta.pages], [30, 600, 120]);
  });
});

describe("an input over ImageMagick's own resource limits", () => {
  it('BMP and PSD past its width limit: LIMIT_EXCEEDED, exit 2 (it was UNSUPPORTED_INPUT, exit 3); within it they decode', async () => {
    for (const ext of ['bmp', 'psd']) {
      const file = path.join(dir, `wide.${ext}`);
      await exec('convert', ['-size', '300x20', 'xc:#2050c0', `${ext === 'bmp' ? 'bmp3' : 'psd'}:${file}`]);
      const out = path.join(dir, `im-${ext}`);
      const res = await kiln(['convert', file, '--format', 'png', '-o', `${out}/`, '--json'], { env: { MAGICK_WIDTH_LIMIT: '100' } });
      assert.equal(res.code, 2, res.stdout + res.stderr);
      const { error } = JSON.parse(res.stdout) as { error: { code: string; message: string } };
      assert.equal(error.code, 'LIMIT_EXCEEDED');
      assert.match(error.message, /over its resource limits .*width or height exceeds limit/);
      assert.deepEqual(existsSync(out) ? readdirSync(out) : [], []);
      const ok = await kiln(['convert', file, '--format', 'png', '-o', `${out}.png`]);
      assert.equal(ok.code, 0, ok.stderr);
      const { data, info } = await sharp(`${out}.png`).raw().toBuffer({ resolveWithObject: true });
      assert.deepEqual([info.width, info.height], [300, 20]);
      assert.deepEqual([...data.subarray(0, 3)], [0x20, 0x50, 0xc0]);
    }
  });
});
