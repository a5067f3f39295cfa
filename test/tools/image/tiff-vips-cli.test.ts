/**
 * TIFFs sharp's bundled libvips cannot read, decoded through Debian's vips CLI (engines/tiff-probe.ts):
 * 8-bit CIELab was UNSUPPORTED_INPUT ("bad labq format"), a Zstandard- or LZMA-compressed TIFF INTERNAL
 * ("ZSTD compression support is not configured"). Fixtures are written by Debian's vips (Lab: ImageMagick 6
 * stores 8-bit Lab a few levels off) and ImageMagick (codecs), both with Debian's libtiff.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { kiln } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/fixtures.js';
import { filePart, form, startServer } from '../../helpers/server.js';

const dir = tempDir();
const COLOR = [0x40, 0x80, 0xc0];

/** A 40×30 image, left half #4080c0 and right half white, as a PNG. */
function png(name: string): string {
  const file = path.join(dir, name);
  execFileSync('convert', ['-size', '20x30', 'xc:#4080c0', '-size', '20x30', 'xc:white', '+append', file]);
  return file;
}

/** The image as a TIFF written by ImageMagick with `args` (a compression). */
function tiff(name: string, args: string[]): string {
  const file = path.join(dir, name);
  execFileSync('convert', [png(`${name}.src.png`), ...args, file]);
  return file;
}

/** The image as an 8-bit CIELab TIFF (vips writes its packed LabQ so). */
function labTiff(name: string): string {
  const file = path.join(dir, name);
  execFileSync('vips', ['colourspace', png(`${name}.src.png`), file, 'labq']);
  return file;
}

/** The first and last pixel of a decoded output. */
async function corners(bytes: Buffer | string): Promise<{ width: number; height: number; first: number[]; last: number[] }> {
  const { data, info } = await sharp(bytes).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, first: [...data.subarray(0, 3)], last: [...data.subarray(data.length - 3)] };
}

function near(actual: number[], expected: number[], tolerance: number, what: string): void {
  assert.ok(
    actual.every((v, i) => Math.abs(v - expected[i]!) <= tolerance),
    `${what}: ${actual} not within ${tolerance} of ${expected}`,
  );
}

describe('TIFFs only the vips CLI reads', () => {
  const cases = [
    ['lab8.tif', () => labTiff('lab8.tif'), 6],
    ['zstd.tif', () => tiff('zstd.tif', ['-compress', 'Zstd']), 0],
    ['lzma.tif', () => tiff('lzma.tif', ['-compress', 'LZMA']), 0],
  ] as const;

  it('8-bit CIELab, ZSTD and LZMA TIFFs convert with their pixels (CLI, from disk)', async () => {
    for (const [name, make, tolerance] of cases) {
      const file = make();
      const out = path.join(dir, `${name}.png`);
      const r = await kiln(['convert', file, '--format', 'png', '-o', out]);
      assert.equal(r.code, 0, `${name}: ${r.stderr}`);
      const c = await corners(out);
      assert.deepEqual([c.width, c.height], [40, 30], name);
      near(c.first, COLOR, tolerance, name);
      near(c.last, [255, 255, 255], tolerance, name);
    }
  });

  it('an 8-bit Lab TIFF uploaded to the daemon (held in memory) converts too', async () => {
    const s = await startServer();
    try {
      const auth = { authorization: `Bearer ${s.token}` };
      const file = labTiff('lab8-upload.tif');
      const res = await fetch(`${s.url}/api/v1/tools/image/convert`, {
        method: 'POST',
        headers: auth,
        body: await form({ file: await filePart(file), settings: JSON.stringify({ format: 'png' }) }),
      });
      const body = (await res.json()) as { downloadUrl: string };
      assert.equal(res.status, 200, JSON.stringify(body));
      const png = Buffer.from(await (await fetch(s.url + body.downloadUrl, { headers: auth })).arrayBuffer());
      const c = await corners(png);
      assert.deepEqual([c.width, c.height], [40, 30]);
      near(c.first, COLOR, 6, 'upload');
    } finally {
      await s.close();
    }
  });
});
