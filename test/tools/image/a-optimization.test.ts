import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { PDFDocument } from '@cantoo/pdf-lib';
import sharp from 'sharp';
import type { KilnError } from '../../../src/core/errors.js';
import { kiln } from '../../helpers/cli.js';
import { makeImage, makePhoto, tempDir } from '../../helpers/fixtures.js';
import { runA, solid } from './a-helpers.js';
import { readZip } from '../../helpers/zip.js';

const dir = tempDir();

describe('edit-metadata', () => {
  it('writes every field, read back with exiftool', async () => {
    const src = await makeImage(dir, 'meta.jpg', 40, 30);
    const r = await runA(
      'edit-metadata',
      [src],
      {
        title: 'Harbour at dawn',
        description: 'Boats, ünïcode',
        author: 'A. Person',
        copyright: '© 2026 A. Person',
        keywords: ['sea', 'boats'],
        gps: { lat: -33.8568, lon: 151.2153 },
        dateTime: '2024-05-06T07:08:09',
      },
      {},
      dir,
    );
    const j = JSON.parse(
      execFileSync('exiftool', [
        '-j',
        '-n',
        '-XMP-dc:all',
        '-EXIF:all',
        '-IPTC:Keywords',
        '-Composite:GPSLatitude',
        '-Composite:GPSLongitude',
        r.kept!,
      ]).toString(),
    )[0];
    assert.equal(j.Title, 'Harbour at dawn');
    assert.equal(j.ImageDescription, 'Boats, ünïcode');
    assert.equal(j.Artist, 'A. Person');
    assert.equal(j.Copyright, '© 2026 A. Person');
    assert.deepEqual(j.Subject, ['sea', 'boats']);
    assert.deepEqual(j.Keywords, ['sea', 'boats']);
    assert.ok(Math.abs(j.GPSLatitude - -33.8568) < 1e-4 && Math.abs(j.GPSLongitude - 151.2153) < 1e-4);
    assert.equal(j.DateTimeOriginal, '2024:05:06 07:08:09');
    const before = await sharp(src).raw().toBuffer();
    assert.deepEqual(await sharp(r.kept!).raw().toBuffer(), before);
  });
  it('PNG works; no field and bad values are rejected', async () => {
    const src = await makeImage(dir, 'meta.png', 10, 10);
    const r = await runA('edit-metadata', [src], { author: 'B' }, {}, dir);
    assert.equal(JSON.parse(execFileSync('exiftool', ['-j', '-Artist', r.kept!]).toString())[0].Artist, 'B');
    await assert.rejects(runA('edit-metadata', [src], {}), (e: KilnError) => e.code === 'VALIDATION_ERROR');
    await assert.rejects(runA('edit-metadata', [src], { gps: { lat: 91, lon: 0 } }), (e: KilnError) => e.code === 'VALIDATION_ERROR');
    await assert.rejects(runA('edit-metadata', [src], { dateTime: 'yesterday' }), (e: KilnError) => e.code === 'VALIDATION_ERROR');
  });
  it('a title with an emoji is never written garbled into the UCS-2 XPTitle (an older XPTitle goes too)', async () => {
    // ExifTool kept only the low 16 bits of U+1F389: Windows showed U+F389 where the XMP title had the emoji.
    const first = await runA('edit-metadata', [await makeImage(dir, 'xp.jpg', 10, 10)], { title: 'Old title' }, {}, dir);
    const r = await runA('edit-metadata', [first.kept!], { title: 'Fête 🎉' }, {}, dir);
    const j = JSON.parse(execFileSync('exiftool', ['-j', '-XMP-dc:Title', '-IPTC:ObjectName', '-EXIF:XPTitle', r.kept!]).toString())[0];
    assert.equal(j.Title, 'Fête 🎉');
    assert.equal(j.ObjectName, 'Fête 🎉');
    assert.equal(j.XPTitle, undefined);
    assert.deepEqual(r.data?.warnings, ["EXIF XPTitle left out: it holds UCS-2 text, which has no room for characters such as '🎉'"]);
  });
  it('CLI: a repeated --keywords keeps every value (each one a word or a comma list)', async () => {
    const src = await makeImage(dir, 'meta-cli.jpg', 10, 10);
    const out = path.join(dir, 'meta-cli-out.jpg');
    const res = await kiln(['edit-metadata', src, '--keywords', 'sea', '--keywords', 'boats, nets', '--title', 'T', '-o', out, '-q']);
    assert.equal(res.code, 0, res.stderr);
    const j = JSON.parse(execFileSync('exiftool', ['-j', '-XMP-dc:Subject', '-IPTC:Keywords', out]).toString())[0];
    assert.deepEqual(j.Subject, ['sea', 'boats', 'nets']);
    assert.deepEqual(j.Keywords, ['sea', 'boats', 'nets']);
  });
});

describe('bulk-rename', () => {
  it('renames with {n}, padding, startIndex, {original} and keeps extensions', async () => {
    const a = await makeImage(dir, 'first.jpg', 10, 10);
    const b = await makeImage(dir, 'second.png', 10, 10);
    const r = await runA('bulk-rename', [a, b], { pattern: 'trip-{n}-{original}-{date}', startIndex: 7, padding: 3 }, {}, dir);
    const entries = await readZip(r.kept!);
    const today = new Date().toISOString().slice(0, 10);
    assert.deepEqual([...entries.keys()].sort(), [`trip-007-first-${today}.jpg`, `trip-008-second-${today}.png`]);
    assert.deepEqual(entries.get(`trip-007-first-${today}.jpg`), readFileSync(a));
    const dated = path.join(dir, 'dated.jpg');
    execFileSync('exiftool', ['-o', dated, '-DateTimeOriginal=2021:03:04 05:06:07', a]);
    const d = await runA('bulk-rename', [dated], { pattern: '{date}_{n}' }, {}, dir);
    assert.deepEqual([...(await readZip(d.kept!)).keys()], ['2021-03-04_1.jpg']);
    const one = await runA('bulk-rename', [a], {}, {}, dir);
    assert.deepEqual([...(await readZip(one.kept!)).keys()], ['image-1.jpg']);
  });
});

describe('image-to-pdf', () => {
  it('one page per image, page size and orientation, JPEG embedded as is', async () => {
    const jpg = await makePhoto(dir, 'p.jpg', 300, 200);
    const png = await makeImage(dir, 'q.png', 50, 100);
    const r = await runA('image-to-pdf', [jpg, png], { pageSize: 'Letter', orientation: 'landscape' }, {}, dir);
    const doc = await PDFDocument.load(readFileSync(r.kept!));
    assert.equal(doc.getPageCount(), 2);
    assert.deepEqual([doc.getPage(0).getWidth(), doc.getPage(0).getHeight()], [792, 612]);
    const jpgBytes = readFileSync(jpg);
    assert.ok(readFileSync(r.kept!).includes(jpgBytes.subarray(0, 2000)), 'the JPEG bytes are inside the PDF unchanged');
    const a5 = await PDFDocument.load(readFileSync((await runA('image-to-pdf', [png], { pageSize: 'A5' }, {}, dir)).kept!));
    assert.deepEqual([Math.round(a5.getPage(0).getWidth()), Math.round(a5.getPage(0).getHeight())], [420, 595]);
    await assert.rejects(runA('image-to-pdf', [png], { pageSize: 'A5', margin: 300 }), (e: KilnError) => e.code === 'VALIDATION_ERROR');
  });
  it('a truncated JPEG is refused (UNSUPPORTED_INPUT) as by every other tool, not embedded as a broken picture', async () => {
    const whole = readFileSync(await makePhoto(dir, 'whole.jpg', 300, 200));
    const cut = path.join(dir, 'cut.jpg');
    writeFileSync(cut, whole.subarray(0, Math.floor(whole.length / 2)));
    await assert.rejects(runA('image-to-pdf', [cut], {}), (e: KilnError) => {
      assert.equal(e.code, 'UNSUPPORTED_INPUT');
      assert.match(e.message, /cut\.jpg could not be decoded \(it is damaged or truncated\)/);
      return true;
    });
  });
  it('limits the whole PDF to 500 pages, not each input: two 251-page TIFFs are refused before any is decoded', async () => {
    const page = await sharp({ create: { width: 2, height: 2, channels: 3, background: 'red' } })
      .png()
      .toBuffer();
    const files: string[] = [];
    for (const name of ['a.tiff', 'b.tiff']) {
      const p = path.join(dir, `many-${name}`);
      await sharp(Array(251).fill(page), { join: { animated: true } })
        .tiff()
        .toFile(p);
      files.push(p);
    }
    assert.equal((await sharp(files[0]!).metadata()).pages, 251);
    await assert.rejects(
      runA('image-to-pdf', files, {}, {}, dir),
      (e: KilnError) => e.code === 'LIMIT_EXCEEDED' && /502 pages together/.test(e.message),
    );
  });
  it('makes every page of a multi-page TIFF a page (tiff-to-pdf kept the first only)', async () => {
    const colors = ['red', 'blue', 'lime'];
    const pages = await Promise.all(
      colors.map((c) =>
        sharp({ create: { width: 40, height: 20, channels: 3, background: c } })
          .png()
          .toBuffer(),
      ),
    );
    const tiff = path.join(dir, 'scan.tiff');
    await sharp(pages, { join: { animated: true } })
      .tiff()
      .toFile(tiff);
    for (const targetSize of [undefined, { value: 2, unit: 'KB' }]) {
      const r = await runA('image-to-pdf', [tiff], targetSize ? { targetSize } : {}, {}, dir);
      assert.equal(r.data!.pages, 3);
      assert.equal((await PDFDocument.load(readFileSync(r.kept!))).getPageCount(), 3);
      // In order: the middle of each rendered page is that TIFF page's colour.
      const middles: number[][] = [];
      for (let page = 1; page <= 3; page++) {
        const png = execFileSync('pdftoppm', ['-r', '20', '-f', String(page), '-l', String(page), '-png', r.kept!]);
        const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
        const i = (Math.floor(info.height / 2) * info.width + Math.floor(info.width / 2)) * info.channels;
        middles.push([...data.subarray(i, i + 3)].map((v) => (v > 128 ? 1 : 0)));
      }
      assert.deepEqual(
        middles,
        [
          [1, 0, 0],
          [0, 0, 1],
          [0, 1, 0],
        ],
        JSON.stringify(targetSize),
      );
    }
  });
  it('a Display P3 JPEG keeps its colours (jpg-to-pdf embedded its P3 values as sRGB ones: red came out 234,51,35)', async () => {
    const srgbRed = { r: 255, g: 0, b: 0 };
    const p3 = path.join(dir, 'p3.jpg');
    await sharp({ create: { width: 16, height: 16, channels: 3, background: srgbRed } })
      .withIccProfile('p3')
      .jpeg({ quality: 100 })
      .toFile(p3);
    const tagged = await sharp(p3).keepIccProfile().raw().toBuffer();
    assert.ok(tagged[1]! > 30, `the fixture holds P3 values, not sRGB ones: ${[...tagged.subarray(0, 3)]}`);
    const untagged = await makePhoto(dir, 'plain.jpg', 30, 20);
    const r = await runA('image-to-pdf', [p3, untagged], {}, {}, dir);
    const png = execFileSync('pdftoppm', ['-r', '20', '-f', '1', '-l', '1', '-png', r.kept!]);
    const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
    const i = (Math.floor(info.height / 2) * info.width + Math.floor(info.width / 2)) * info.channels;
    const [red, green, blue] = [...data.subarray(i, i + 3)];
    assert.ok(red! > 245 && green! < 15 && blue! < 15, `sRGB red on the page, got ${[red, green, blue]}`);
    // An sRGB-or-untagged JPEG is still embedded as it is.
    assert.ok(readFileSync(r.kept!).includes(readFileSync(untagged).subarray(0, 2000)), 'the plain JPEG is inside unchanged');
  });
  it('targetSize recompresses until the PDF fits', async () => {
    const big = await makePhoto(dir, 'big.png', 900, 700);
    const plain = await runA('image-to-pdf', [big], {});
    assert.ok(plain.processedSize > 300 * 1024, `uncompressed size ${plain.processedSize}`);
    const r = await runA('image-to-pdf', [big], { targetSize: { value: 100, unit: 'KB' } }, {}, dir);
    assert.equal(r.data!.targetMet, true);
    assert.ok(r.processedSize <= 100 * 1024);
    assert.equal((await PDFDocument.load(readFileSync(r.kept!))).getPageCount(), 1);
  });
});

describe('favicon', () => {
  it('writes every size, a parseable multi-size ICO, manifest and snippet', async () => {
    const src = await solid(dir, 'logo.png', 300, 200, () => [200, 30, 30]);
    const r = await runA('favicon', [src], { padding: 10, borderRadius: 50 }, {}, dir);
    const z = await readZip(r.kept!);
    for (const [name, size] of [
      ['favicon-16x16.png', 16],
      ['favicon-32x32.png', 32],
      ['apple-touch-icon.png', 180],
      ['android-chrome-192x192.png', 192],
      ['android-chrome-512x512.png', 512],
    ] as const) {
      const m = await sharp(z.get(name)!).metadata();
      assert.deepEqual([m.width, m.height], [size, size], name);
    }
    const p512 = await sharp(z.get('android-chrome-512x512.png')!).raw().toBuffer();
    assert.equal(p512[3], 0, 'rounded corner is transparent');
    assert.deepEqual([...p512.subarray((256 * 512 + 256) * 4, (256 * 512 + 256) * 4 + 4)], [200, 30, 30, 255]);
    assert.equal((await sharp(z.get('apple-touch-icon.png')!).metadata()).hasAlpha, false, 'apple icon is opaque');
    const ico = z.get('favicon.ico')!;
    assert.deepEqual([ico.readUInt16LE(0), ico.readUInt16LE(2), ico.readUInt16LE(4)], [0, 1, 4]);
    const sizes = [0, 1, 2, 3].map((i) => ico[6 + 16 * i] || 256);
    assert.deepEqual(sizes, [16, 32, 48, 256]);
    // The 32 px entry is a DIB: header size 40, double height, 32 bpp; its center pixel is the red fill (BGRA).
    const off = ico.readUInt32LE(6 + 16 + 12);
    assert.deepEqual(
      [ico.readUInt32LE(off), ico.readInt32LE(off + 4), ico.readInt32LE(off + 8), ico.readUInt16LE(off + 14)],
      [40, 32, 64, 32],
    );
    const c = off + 40 + (16 * 32 + 16) * 4;
    assert.deepEqual([...ico.subarray(c, c + 4)], [30, 30, 200, 255]);
    const pngOff = ico.readUInt32LE(6 + 48 + 12);
    assert.equal((await sharp(ico.subarray(pngOff, pngOff + ico.readUInt32LE(6 + 48 + 8))).metadata()).width, 256);
    assert.equal(JSON.parse(z.get('site.webmanifest')!.toString()).icons.length, 2);
    assert.match(z.get('head.html')!.toString(), /apple-touch-icon/);
  });
  it('CLI writes the ZIP', async () => {
    const src = await solid(dir, 'l2.png', 64, 64, () => [0, 0, 255]);
    const out = path.join(dir, 'icons.zip');
    const res = await kiln(['favicon', src, '--background-color', '#ffffff', '-o', out, '-q']);
    assert.equal(res.code, 0, res.stderr);
    assert.ok((await readZip(out)).has('favicon.ico'));
  });
});
