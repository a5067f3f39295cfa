import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { getTool } from '../../../src/tools/index.js';
import { runTool, inputFile } from '../../../src/tools/run-tool.js';
import { createWorkspace } from '../../../src/core/workspace.js';
import { makeImage, makePhoto, tempDir } from '../../helpers/fixtures.js';
import { kiln } from '../../helpers/cli.js';

const dir = tempDir();

async function run(file: string, settings: Record<string, unknown>) {
  const ws = await createWorkspace();
  try {
    const out = await runTool(getTool('optimize-for-web'), { files: [await inputFile(file)], extra: {} }, settings, {
      workDir: ws.dir,
      dataDir: dir,
    });
    return { out, name: out.output!.name, meta: await sharp(out.output!.path).metadata() };
  } finally {
    await ws.dispose();
  }
}

async function photoWithExif(name: string, w: number, h: number): Promise<string> {
  const p = path.join(dir, name);
  await sharp(await makePhoto(dir, `src-${name}`, w, h))
    .withExif({ IFD0: { Make: 'KilnCam', Model: 'T1' }, IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '48/1 51/1 24/1' } })
    .jpeg({ quality: 95 })
    .toFile(p);
  return p;
}

describe('optimize-for-web', () => {
  it('writes WebP by default and drops metadata', async () => {
    const src = await photoWithExif('a.jpg', 300, 200);
    assert.ok((await sharp(src).metadata()).exif);
    const r = await run(src, {});
    assert.equal(r.name, 'a.webp');
    assert.equal(r.meta.format, 'webp');
    assert.equal(r.meta.exif, undefined);
    assert.ok((r.out.data!.size as number) < (r.out.data!.originalSize as number));
  });
  it('fits max dimensions without enlarging', async () => {
    const src = await makePhoto(dir, 'b.jpg', 400, 200);
    const r = await run(src, { maxWidth: 100, maxHeight: 100, format: 'avif' });
    assert.deepEqual([r.meta.width, r.meta.height, r.meta.format], [100, 50, 'heif']);
    const big = await run(src, { maxWidth: 2000 });
    assert.deepEqual([big.meta.width, big.meta.height], [400, 200]);
  });
  it('writes progressive JPEG and interlaced PNG, and keeps metadata on request', async () => {
    const src = await photoWithExif('c.jpg', 200, 100);
    const j = await run(src, { format: 'jpeg', stripMetadata: false });
    assert.equal(j.meta.format, 'jpeg');
    assert.equal(j.meta.isProgressive, true);
    assert.ok(j.meta.exif, 'EXIF kept');
    const flat = await run(src, { format: 'jpeg', progressive: false });
    assert.equal(flat.meta.isProgressive, false);
    const png = await run(await makeImage(dir, 'd.png', 50, 50, { alpha: true }), { format: 'png' });
    assert.equal(png.meta.format, 'png');
    assert.equal(png.meta.isProgressive, true);
  });
  it('runs from the CLI with --max-width and --format', async () => {
    const src = await makePhoto(dir, 'cli.jpg', 300, 150);
    const out = path.join(dir, 'cli.jpg.out.jpg');
    const r = await kiln(['optimize-for-web', src, '--format', 'jpeg', '--max-width', '120', '--quality', '70', '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    const m = await sharp(out).metadata();
    assert.deepEqual([m.width, m.height, m.format], [120, 60, 'jpeg']);
  });
});
