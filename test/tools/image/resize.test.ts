import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { getTool } from '../../../src/tools/index.js';
import { runTool, inputFile } from '../../../src/tools/run-tool.js';
import { createWorkspace } from '../../../src/core/workspace.js';
import type { KilnError } from '../../../src/core/errors.js';
import { makeImage, tempDir } from '../../helpers/fixtures.js';

const dir = tempDir();

async function run(file: string, settings: Record<string, unknown>) {
  const ws = await createWorkspace();
  try {
    const out = await runTool(getTool('resize'), { files: [await inputFile(file)], extra: {} }, settings, {
      workDir: ws.dir,
      dataDir: dir,
    });
    return { out, meta: await sharp(out.output!.path).metadata(), bytes: await readFile(out.output!.path) };
  } finally {
    await ws.dispose();
  }
}

describe('resize', () => {
  it('takes a Photoshop file (decoded like every image input) and writes PNG', async () => {
    // Left half red, right half blue, made by ImageMagick as a real PSD.
    const psd = path.join(dir, 'layers.psd');
    execFileSync('convert', ['-size', '120x60', 'xc:red', '-fill', 'blue', '-draw', 'rectangle 60,0 119,59', psd]);
    const { out, meta, bytes } = await run(psd, { width: 60 });
    assert.deepEqual([meta.width, meta.height, meta.format], [60, 30, 'png']);
    assert.match(out.output!.name, /^layers\.png$/);
    const { data, info } = await sharp(bytes).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const px = (x: number, y: number) => [...data.subarray((y * info.width + x) * 3, (y * info.width + x) * 3 + 3)];
    assert.deepEqual(px(10, 15), [255, 0, 0]);
    assert.deepEqual(px(50, 15), [0, 0, 255]);
  });
  it('scales to a width keeping the aspect ratio', async () => {
    const src = await makeImage(dir, 'a.jpg', 400, 200);
    const { meta } = await run(src, { width: 100 });
    assert.equal(meta.width, 100);
    assert.equal(meta.height, 50);
    assert.equal(meta.format, 'jpeg');
  });
  it('scales by percentage', async () => {
    const src = await makeImage(dir, 'b.png', 400, 200);
    const { meta } = await run(src, { percentage: 25 });
    assert.deepEqual([meta.width, meta.height, meta.format], [100, 50, 'png']);
  });
  it('applies a social preset with cover', async () => {
    const src = await makeImage(dir, 'c.jpg', 400, 200);
    const { meta } = await run(src, { preset: 'instagram-story' });
    assert.deepEqual([meta.width, meta.height], [1080, 1920]);
  });
  it('never enlarges with withoutEnlargement', async () => {
    const src = await makeImage(dir, 'd.jpg', 100, 50);
    const { meta } = await run(src, { width: 1000, withoutEnlargement: true });
    assert.equal(meta.width, 100);
  });
  it('fill distorts to the exact box', async () => {
    const src = await makeImage(dir, 'e.png', 100, 50);
    const { meta } = await run(src, { width: 30, height: 90, fit: 'fill' });
    assert.deepEqual([meta.width, meta.height], [30, 90]);
  });
  it('rejects missing dimensions and bad values', async () => {
    const src = await makeImage(dir, 'f.png', 10, 10);
    await assert.rejects(run(src, {}), (e: KilnError) => e.code === 'VALIDATION_ERROR');
    await assert.rejects(run(src, { width: 0 }), (e: KilnError) => e.code === 'VALIDATION_ERROR');
    await assert.rejects(run(src, { widht: 10 }), (e: KilnError) => e.code === 'VALIDATION_ERROR' && /did you mean width/.test(e.message));
  });
  it('refuses a result over the pixel limit before making it (a tiny input asked for 268 MP)', async () => {
    const tiny = await makeImage(dir, 'tiny-huge.png', 8, 8, { format: 'png' });
    const tall = await makeImage(dir, 'tall.png', 4, 400, { format: 'png' });
    for (const settings of [
      { width: 16383, height: 16383, fit: 'fill' },
      { width: 16383, height: 100, fit: 'outside' },
      // One side given: the other follows the aspect ratio (4×400 at width 2000 is 2000×200000).
      { width: 2000, file: tall },
    ]) {
      const { file, ...s } = settings as { file?: string } & Record<string, unknown>;
      await assert.rejects(run(file ?? tiny, s), (e: KilnError) => {
        assert.equal(e.code, 'LIMIT_EXCEEDED', e.message);
        assert.match(
          e.message,
          /^The resized image would be \d+×\d+ pixels \(\d+ MP\), above the limit of 100 MP \(KILN_MAX_PIXELS=100000000\)\.$/,
        );
        return true;
      });
    }
    // Under the limit, and never enlarged: made.
    assert.equal((await run(tiny, { width: 4000, height: 2000, fit: 'fill' })).meta.width, 4000);
    assert.equal((await run(tiny, { width: 16383, height: 16383, fit: 'fill', withoutEnlargement: true })).meta.width, 8);
  });

  it('rejects a file that is not an image by its bytes', async () => {
    const fake = path.join(dir, 'fake.jpg');
    (await import('node:fs')).writeFileSync(fake, 'hello, not an image');
    await assert.rejects(run(fake, { width: 10 }), (e: KilnError) => e.code === 'UNSUPPORTED_INPUT');
  });
});

describe('resize: animations and EXIF orientation', () => {
  it('keeps animated WebP and GIF animated', async () => {
    const frames = await Promise.all(
      [0, 1, 2].map((i) =>
        sharp({ create: { width: 40, height: 20, channels: 4, background: { r: 90 * i, g: 0, b: 0, alpha: 1 } } })
          .png()
          .toBuffer(),
      ),
    );
    for (const f of ['webp', 'gif'] as const) {
      const src = path.join(dir, `anim.${f}`);
      await sharp(frames, { join: { animated: true } })
        [f]({ delay: [100, 100, 100] })
        .toFile(src);
      const ws = await createWorkspace();
      try {
        const out = await runTool(
          getTool('resize'),
          { files: [await inputFile(src)], extra: {} },
          { percentage: 50 },
          { workDir: ws.dir, dataDir: dir },
        );
        const m = await sharp(out.output!.path, { animated: true }).metadata();
        assert.deepEqual([m.format, m.pages, m.width, m.pageHeight], [f, 3, 20, 10]);
      } finally {
        await ws.dispose();
      }
    }
  });
  it('measures width as displayed for EXIF-rotated photos', async () => {
    const src = path.join(dir, 'rot6.jpg');
    await sharp(await makeImage(dir, 'rot6-src.png', 200, 100))
      .withMetadata({ orientation: 6 })
      .jpeg()
      .toFile(src);
    const { meta } = await run(src, { width: 50 });
    assert.deepEqual([meta.width, meta.height, meta.orientation ?? 1], [50, 100, 1]);
    const pct = await run(src, { percentage: 50 });
    assert.deepEqual([pct.meta.width, pct.meta.height], [50, 100]);
  });
  it('runs from the CLI with --without-enlargement', async () => {
    const { kiln } = await import('../../helpers/cli.js');
    const src = await makeImage(dir, 'cli-small.png', 60, 30);
    const out = path.join(dir, 'cli-small-out.png');
    const r = await kiln(['resize', src, '--width', '600', '--without-enlargement', '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual([(await sharp(out).metadata()).width], [60]);
    const big = path.join(dir, 'cli-big-out.png');
    assert.equal((await kiln(['resize', src, '--width', '600', '-o', big])).code, 0);
    assert.equal((await sharp(big).metadata()).width, 600);
  });
});
