import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileTypeFromBuffer } from 'file-type';
import sharp from 'sharp';
import { sniffCommonImage } from '../../src/core/sniff-common.js';
import { sniffFile } from '../../src/core/sniff.js';
import { tempDir } from '../helpers/fixtures.js';

const norm = (ext: string) => (ext === 'jpeg' ? 'jpg' : ext);

test('the quick signatures answer exactly what file-type answers, or leave the file to it', async () => {
  const img = sharp({ create: { width: 8, height: 8, channels: 3, background: '#c33' } });
  const cases: [string, Uint8Array][] = [
    ['jpeg from sharp', await img.clone().jpeg().toBuffer()],
    ['gif from sharp', await img.clone().gif().toBuffer()],
    ['png from sharp', await img.clone().png().toBuffer()],
    ['webp from sharp', await img.clone().webp().toBuffer()],
    ['JPEG-LS marker', Uint8Array.from([0xff, 0xd8, 0xff, 0xf7, 0, 0x0b, 8, 0, 8, 0, 8, 1, 1, 0x11, 0])],
    ['JPEG with an APP1 marker', Uint8Array.from([0xff, 0xd8, 0xff, 0xe1, ...new Array(40).fill(0)])],
    ['GIF87a', Uint8Array.from([...Buffer.from('GIF87a'), 1, 0, 1, 0, 0, 0, 0, 0x3b])],
    ['three bytes', Uint8Array.from([0xff, 0xd8, 0xff])],
    ['MP3 frame sync', Uint8Array.from([0xff, 0xfb, 0x90, 0x64, ...new Array(40).fill(0)])],
  ];
  let quick = 0;
  for (const [label, bytes] of cases) {
    const mine = sniffCommonImage(bytes);
    if (!mine) continue;
    quick++;
    const theirs = await fileTypeFromBuffer(bytes);
    assert.ok(theirs, `${label}: file-type knows it`);
    assert.deepEqual([mine.ext, mine.mime], [norm(theirs.ext), theirs.mime], label);
  }
  // JPEG from sharp, the APP1 JPEG, and both GIFs: the JPEG-LS file and the rest went to file-type.
  assert.equal(quick, 4);
  assert.equal(sniffCommonImage(cases[4]![1]), undefined);
});

test('sniffFile answers the quick kinds and still hands other files to file-type', async () => {
  const dir = tempDir();
  const jpg = path.join(dir, 'photo.png');
  await sharp({ create: { width: 4, height: 4, channels: 3, background: '#000' } })
    .jpeg()
    .toFile(jpg);
  assert.deepEqual(await sniffFile(jpg), { ext: 'jpg', mime: 'image/jpeg', text: false });
  const jls = path.join(dir, 'x.jpg');
  writeFileSync(jls, Uint8Array.from([0xff, 0xd8, 0xff, 0xf7, 0, 0x0b, 8, 0, 8, 0, 8, 1, 1, 0x11, 0]));
  assert.equal((await sniffFile(jls)).ext, 'jls');
});

test('UTF-16 text with a BOM is text, not MPEG audio (FF FE is also a Layer I frame header)', async () => {
  const dir = tempDir();
  const le = Buffer.from('\uFEFFname\tqty\r\nbowl\t3\r\n', 'utf16le');
  for (const [name, bytes] of [
    ['excel.csv', le],
    ['excel-be.csv', Buffer.from(le).swap16()],
    ['notes.txt', Buffer.from('\uFEFFcafé 日本 😀\n', 'utf16le')],
  ] as const) {
    const p = path.join(dir, name);
    writeFileSync(p, bytes);
    const kind = await sniffFile(p);
    assert.deepEqual([kind.ext, kind.text], [path.extname(name).slice(1), true], name);
  }
  // A real MPEG-1 Layer I frame (FF FE, then bitrate and padding bytes): not text.
  const mp1 = Buffer.from([0xff, 0xfe, 0x90, 0x04, ...new Array(60).fill(0x55), 0, 0]);
  assert.notEqual((await sniffFile(mp1, 'a.csv')).text, true);
});
