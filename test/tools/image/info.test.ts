import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { getTool } from '../../../src/tools/index.js';
import { runTool, inputFile } from '../../../src/tools/run-tool.js';
import { createWorkspace } from '../../../src/core/workspace.js';
import type { KilnError } from '../../../src/core/errors.js';
import { makeImage, tempDir } from '../../helpers/fixtures.js';
import { makeApng } from '../../helpers/media.js';
import { kiln } from '../../helpers/cli.js';

const dir = tempDir();

async function run(file: string) {
  const ws = await createWorkspace();
  try {
    const out = await runTool(getTool('info'), { files: [await inputFile(file)], extra: {} }, {}, { workDir: ws.dir, dataDir: dir });
    return out.data as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  } finally {
    await ws.dispose();
  }
}

describe('info', () => {
  it('reports size, format, channels, DPI, orientation and readable EXIF', async () => {
    const p = path.join(dir, 'photo.jpg');
    await sharp(await makeImage(dir, 'src.png', 120, 80))
      .withExif({
        IFD0: { Make: 'KilnCam', Model: 'T1' },
        IFD2: { DateTimeOriginal: '2024:05:06 07:08:09', ExposureTime: '1/125' },
        IFD3: { GPSLatitudeRef: 'N' },
      })
      .withMetadata({ density: 300, orientation: 6 })
      .jpeg()
      .toFile(p);
    const d = await run(p);
    assert.deepEqual([d.width, d.height, d.displayWidth, d.displayHeight], [120, 80, 80, 120]);
    assert.equal(d.format, 'jpg');
    assert.equal(d.size, (await import('node:fs')).statSync(p).size);
    assert.deepEqual([d.channels, d.hasAlpha, d.dpi, d.orientation, d.colorSpace, d.bitDepth, d.pages], [3, false, 300, 6, 'srgb', 8, 1]);
    assert.equal(d.exif.Image.Make, 'KilnCam');
    assert.equal(d.exif.Photo.DateTimeOriginal, '2024-05-06T07:08:09.000Z');
    assert.equal(d.exif.Photo.ExposureTime, 1 / 125);
    assert.equal(d.exif.GPSInfo.GPSLatitudeRef, 'N');
    assert.ok(!JSON.stringify(d).includes('"type":"Buffer"'), 'no binary blobs');
  });
  it('reports alpha, ICC profile name and animation frames', async () => {
    const png = path.join(dir, 'p3.png');
    await sharp(await makeImage(dir, 'a.png', 20, 10, { alpha: true }))
      .withIccProfile('p3')
      .toFile(png);
    const d = await run(png);
    assert.deepEqual([d.format, d.channels, d.hasAlpha, d.exif], ['png', 4, true, null]);
    assert.match(d.iccProfile, /P3/);
    const frames = await Promise.all(
      [0, 1, 2, 3].map((i) =>
        sharp({ create: { width: 16, height: 8, channels: 3, background: { r: 60 * i, g: 0, b: 0 } } })
          .png()
          .toBuffer(),
      ),
    );
    const gif = path.join(dir, 'a.gif');
    await sharp(frames, { join: { animated: true } })
      .gif({ delay: [50, 60, 70, 80], loop: 3 })
      .toFile(gif);
    const g = await run(gif);
    assert.deepEqual([g.width, g.height, g.pages, g.animated, g.loop, g.delays], [16, 8, 4, true, 3, [50, 60, 70, 80]]);
  });
  it('reports an APNG as animated with its frames, loop and delays; a multi-page TIFF as pages, not an animation', async () => {
    const apng = makeApng(dir, 'a.apng', { width: 16, height: 8, frames: 3, delayMs: 250, plays: 2 });
    const a = await run(apng);
    assert.deepEqual([a.width, a.pages, a.animated, a.loop, a.delays], [16, 3, true, 2, [250, 250, 250]]);
    const tiff = path.join(dir, 'pages.tiff');
    execFileSync('convert', ['-size', '8x8', 'xc:red', 'xc:blue', tiff]);
    const t = await run(tiff);
    assert.deepEqual([t.pages, t.animated, t.delays], [2, false, undefined]);
  });
  it('reports the size of an image above the pixel limit (only its header is read)', async () => {
    // A 1-bit 20000×20000 PNG: 400 MP, four times KILN_MAX_PIXELS, in a few kB.
    const { deflateSync, crc32 } = await import('node:zlib');
    const w = 20000;
    const row = Buffer.alloc(1 + w / 8);
    const chunk = (type: string, data: Buffer) => {
      const len = Buffer.alloc(4);
      len.writeUInt32BE(data.length);
      const crc = Buffer.alloc(4);
      crc.writeUInt32BE(crc32(Buffer.concat([Buffer.from(type), data])));
      return Buffer.concat([len, Buffer.from(type), data, crc]);
    };
    const ihdr = Buffer.alloc(13);
    ihdr.writeUInt32BE(w, 0);
    ihdr.writeUInt32BE(w, 4);
    ihdr[8] = 1;
    const p = path.join(dir, 'huge.png');
    (await import('node:fs')).writeFileSync(
      p,
      Buffer.concat([
        Buffer.from('89504e470d0a1a0a', 'hex'),
        chunk('IHDR', ihdr),
        chunk('IDAT', deflateSync(Buffer.concat(Array.from({ length: w }, () => row)))),
        chunk('IEND', Buffer.alloc(0)),
      ]),
    );
    const d = await run(p);
    assert.deepEqual([d.width, d.height, d.format], [w, w, 'png']);
  });
  it('a Photoshop, BMP or ICO file is reported as itself, with its colour space (not as the file ImageMagick made of it)', async () => {
    const png = await makeImage(dir, 'for-magick.png', 24, 16);
    const made = (name: string, ...args: string[]) => {
      const f = path.join(dir, name);
      execFileSync('/usr/bin/convert', [...args, f]);
      return f;
    };
    const cmykPsd = made('cmyk.psd', png, '-colorspace', 'CMYK');
    const d = await run(cmykPsd);
    assert.deepEqual([d.format, d.colorSpace, d.channels, d.width, d.height], ['psd', 'cmyk', 4, 24, 16]);
    assert.equal((await run(made('plain.bmp', png))).format, 'bmp');
    assert.equal((await run(made('icon.ico', png))).format, 'ico');
  });
  it('refuses a file that is not an image', async () => {
    const p = path.join(dir, 'x.png');
    (await import('node:fs')).writeFileSync(p, 'plain text');
    await assert.rejects(run(p), (e: KilnError) => e.code === 'UNSUPPORTED_INPUT');
  });
  it('prints JSON from the CLI', async () => {
    const src = await makeImage(dir, 'cli.webp', 30, 20);
    const r = await kiln(['info', src]);
    assert.equal(r.code, 0, r.stderr);
    const d = JSON.parse(r.stdout) as { width: number; height: number; format: string };
    assert.deepEqual([d.width, d.height, d.format], [30, 20, 'webp']);
  });
});
