import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { getTool } from '../../../src/tools/index.js';
import { runTool, inputFile } from '../../../src/tools/run-tool.js';
import { createWorkspace } from '../../../src/core/workspace.js';
import type { KilnError } from '../../../src/core/errors.js';
import { ascii85Lines } from '../../../src/tools/image/_shared/eps-writer.js';
import { makeImage, tempDir } from '../../helpers/fixtures.js';
import { kiln } from '../../helpers/cli.js';
import { cutInLayers } from '../../hardening/corpus.js';

const dir = tempDir();

async function run(file: string, settings: Record<string, unknown>, keep = path.join(dir, `out-${Math.random().toString(36).slice(2)}`)) {
  const ws = await createWorkspace();
  try {
    const out = await runTool(getTool('convert'), { files: [await inputFile(file)], extra: {} }, settings, {
      workDir: ws.dir,
      dataDir: dir,
    });
    const p = keep + path.extname(out.output!.path);
    execFileSync('cp', [out.output!.path, p]);
    return { out, path: p, name: out.output!.name };
  } finally {
    await ws.dispose();
  }
}

/** Ghostscript's own rendering of an EPS at 72 dpi (one point = one pixel). */
function gsRender(eps: string): string {
  const png = eps + '.gs.png';
  execFileSync('gs', ['-q', '-dSAFER', '-dBATCH', '-dNOPAUSE', '-dEPSCrop', '-r72', '-sDEVICE=png16m', `-sOutputFile=${png}`, eps]);
  return png;
}

describe('convert', () => {
  it('keeps 16 bits per channel from a 16-bit PNG to PNG and TIFF', async () => {
    // Values no 8-bit image holds (1000/257 is no integer): they survive only at 16 bits.
    const px = new Uint16Array(8 * 4 * 3).map((_, i) => 1000 + i * 7);
    const src = path.join(dir, 'deep.png');
    await sharp(px, { raw: { width: 8, height: 4, channels: 3 } })
      .toColourspace('rgb16')
      .png()
      .toFile(src);
    assert.equal((await sharp(src).metadata()).depth, 'ushort', 'fixture is 16-bit');
    for (const format of ['png', 'tiff']) {
      const r = await run(src, { format });
      assert.equal((await sharp(r.path).metadata()).depth, 'ushort', format);
      // ImageMagick's reading of the samples, 16-bit little-endian (sharp's raw output would be cut to 8 bits).
      const back = execFileSync('/usr/bin/convert', [r.path, '-depth', '16', '-endian', 'LSB', 'rgb:-']);
      assert.deepEqual([back.readUInt16LE(0), back.readUInt16LE(2), back.readUInt16LE(4)], [1000, 1007, 1014], format);
    }
  });
  it('reads BMP and ICO input (ImageMagick), the largest icon of an ICO', async () => {
    // Left half red, right half blue; the ICO holds a 16 px green icon before the 48 px one.
    const png = path.join(dir, 'halves.png');
    execFileSync('/usr/bin/convert', ['-size', '48x48', 'xc:red', '-fill', 'blue', '-draw', 'rectangle 24,0 47,47', png]);
    const bmp = path.join(dir, 'halves.bmp');
    execFileSync('/usr/bin/convert', [png, bmp]);
    const small = path.join(dir, 'green16.png');
    execFileSync('/usr/bin/convert', ['-size', '16x16', 'xc:lime', small]);
    const ico = path.join(dir, 'halves.ico');
    execFileSync('/usr/bin/convert', [small, png, ico]);
    for (const src of [bmp, ico]) {
      const r = await run(src, { format: 'png' });
      const { data, info } = await sharp(r.path).removeAlpha().raw().toBuffer({ resolveWithObject: true });
      const px = (x: number, y: number) => [...data.subarray((y * info.width + x) * 3, (y * info.width + x) * 3 + 3)];
      assert.deepEqual([info.width, info.height], [48, 48], src);
      assert.deepEqual(px(5, 5), [255, 0, 0], src);
      assert.deepEqual(px(40, 40), [0, 0, 255], src);
    }
  });
  it('a CMYK Photoshop file gets the colours of the same CMYK JPEG (its ICC profile), a grey one stays grey', async () => {
    // 100% magenta + 100% yellow tagged with a CMYK profile: a naive CMYK → RGB (what ImageMagick's PNG32
    // gave) is pure red (255, 0, 0); through the profile it is the duller red a press prints.
    const icc = (
      await sharp(
        await sharp({ create: { width: 2, height: 2, channels: 3, background: '#808080' } })
          .withIccProfile('cmyk')
          .jpeg()
          .toBuffer(),
      ).metadata()
    ).icc!;
    const iccPath = path.join(dir, 'press.icc');
    writeFileSync(iccPath, icc);
    const make = (ext: string) => {
      const f = path.join(dir, `press.${ext}`);
      execFileSync('/usr/bin/convert', ['-size', '24x12', 'xc:cmyk(0,255,255,0)', '-profile', iccPath, '-quality', '100', f]);
      return f;
    };
    const psd = make('psd');
    const jpg = make('jpg');
    const pixel = async (f: string) => [...(await sharp(f).removeAlpha().toColourspace('srgb').raw().toBuffer()).subarray(0, 3)];
    const fromPsd = await pixel((await run(psd, { format: 'png' })).path);
    const fromJpg = await pixel((await run(jpg, { format: 'png' })).path);
    for (let c = 0; c < 3; c++) assert.ok(Math.abs(fromPsd[c]! - fromJpg[c]!) <= 2, `PSD ${fromPsd} vs JPEG ${fromJpg}`);
    assert.ok(fromPsd[0]! < 245, `the profile was applied (naive CMYK → RGB is 255, 0, 0): ${fromPsd}`);
    const grey = path.join(dir, 'grey.psd');
    execFileSync('/usr/bin/convert', ['-size', '8x8', 'xc:gray40', '-depth', '8', grey]);
    const g = await sharp((await run(grey, { format: 'png' })).path).metadata();
    assert.equal(g.channels, 1, 'a grey PSD is written as grey, not RGBA');
  });
  it('writes every sharp format with the input stem', async () => {
    const src = await makeImage(dir, 'pic.png', 64, 32);
    for (const [format, want] of [
      ['jpg', 'jpeg'],
      ['webp', 'webp'],
      ['avif', 'heif'],
      ['tiff', 'tiff'],
      ['gif', 'gif'],
      ['heif', 'heif'],
      ['png', 'png'],
    ] as const) {
      const r = await run(src, { format, quality: 70 });
      assert.equal(r.name, `pic.${format}`);
      const m = await sharp(r.path).metadata();
      assert.deepEqual([m.format, m.width, m.height], [want, 64, 32], format);
    }
  });
  it('encodes AVIF and AV1 HEIF at effort 3 unless asked otherwise', async () => {
    // sharp's libaom runs on one thread: its default effort 4 cost ~4x the time of 3 for files within a few per cent.
    const { encode } = await import('../../../src/engines/sharp.js');
    const tiny = () => sharp({ create: { width: 8, height: 8, channels: 3, background: '#808080' } });
    for (const format of ['avif', 'heif'] as const) {
      const effort = (o: Parameters<typeof encode>[2]) =>
        (encode(tiny(), format, o) as unknown as { options: { heifEffort: number } }).options.heifEffort;
      assert.deepEqual([effort({}), effort({ optimizeSize: true }), effort({ effort: 4 })], [3, 3, 4], format);
    }
  });
  it('writes HEVC-coded HEIC through vips', async () => {
    const src = await makeImage(dir, 'h.png', 64, 32);
    const r = await run(src, { format: 'heic' });
    const head = readFileSync(r.path).subarray(4, 12).toString('latin1');
    assert.equal(head, 'ftypheic');
    // sharp sets VIPSHOME to its own libvips, where the Debian vips finds no heif module.
    const env = { ...process.env };
    delete env.VIPSHOME;
    const hdr = execFileSync('vipsheader', ['-a', r.path], { env }).toString();
    assert.match(hdr, /width: 64/);
  });
  it('reads HEVC-coded HEIC (heic-to-jpg)', async () => {
    const heic = (await run(await makeImage(dir, 'h2.png', 64, 32), { format: 'heic', quality: 90 })).path;
    const r = await run(heic, { format: 'jpg' });
    const raw = await sharp(r.path).raw().toBuffer({ resolveWithObject: true });
    assert.deepEqual([raw.info.width, raw.info.height], [64, 32]);
    assert.ok(raw.data[3 * (16 * 64 + 5)]! > 200 && raw.data[3 * (16 * 64 + 60) + 2]! > 200, 'red left, blue right');
  });
  it('reads JPEG XL through vips', async () => {
    const png = await makeImage(dir, 'j.png', 40, 20);
    const jxl = path.join(dir, 'j.jxl');
    const env = { ...process.env };
    delete env.VIPSHOME;
    execFileSync('vips', ['copy', png, `${jxl}[lossless]`], { env });
    const r = await run(jxl, { format: 'png' });
    const raw = await sharp(r.path).raw().toBuffer({ resolveWithObject: true });
    assert.deepEqual([raw.info.width, raw.info.height, ...raw.data.subarray(0, 3)], [40, 20, 255, 0, 0]);
  });
  it('flattens transparency onto white for JPEG', async () => {
    const src = path.join(dir, 'clear.png');
    await sharp({ create: { width: 8, height: 8, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } })
      .png()
      .toFile(src);
    const r = await run(src, { format: 'jpg' });
    const { data } = await sharp(r.path).raw().toBuffer({ resolveWithObject: true });
    assert.ok(data[0]! > 250 && data[1]! > 250);
  });
  it('writes EPS (extension D09) that Ghostscript renders back at the same size and colours', async () => {
    const src = await makeImage(dir, 'logo.png', 60, 30);
    const lossless = await run(src, { format: 'eps' });
    const text = readFileSync(lossless.path, 'latin1');
    assert.match(text, /^%!PS-Adobe-3\.0 EPSF-3\.0\n%%BoundingBox: 0 0 60 30\n/);
    const back = await sharp(gsRender(lossless.path)).raw().toBuffer({ resolveWithObject: true });
    assert.deepEqual([back.info.width, back.info.height], [60, 30]);
    const at = (x: number, y: number) => [...back.data.subarray((y * 60 + x) * 3, (y * 60 + x) * 3 + 3)];
    assert.deepEqual(at(5, 5), [255, 0, 0]);
    assert.deepEqual(at(55, 25), [0, 0, 255]);
    const dct = await run(await makeImage(dir, 'photo.jpg', 60, 30), { format: 'eps', quality: 90 });
    assert.match(readFileSync(dct.path, 'latin1'), /DCTDecode/);
    const back2 = await sharp(gsRender(dct.path)).raw().toBuffer({ resolveWithObject: true });
    assert.deepEqual([back2.info.width, back2.info.height], [60, 30]);
    assert.ok(back2.data[5 * 3]! > 200 && back2.data[5 * 3 + 2]! < 60);
  });
  it('an EPS keeps the print size of an image that records its dpi (a 300 dpi inch was 300 pt wide)', async () => {
    const src = path.join(dir, 'print.png');
    await sharp({ create: { width: 300, height: 150, channels: 3, background: 'red' } })
      .withMetadata({ density: 300 })
      .png()
      .toFile(src);
    const text = readFileSync((await run(src, { format: 'eps' })).path, 'latin1');
    assert.match(text, /\n%%BoundingBox: 0 0 72 36\n/, 'one inch by half an inch');
    const back = await sharp(gsRender((await run(src, { format: 'eps' })).path)).metadata();
    assert.deepEqual([back.width, back.height], [72, 36]);
  });
  it('encodes ASCII85 like the reference examples', () => {
    assert.deepEqual(ascii85Lines(Buffer.from('Man ')), ['9jqo^~>']);
    assert.deepEqual(ascii85Lines(Buffer.alloc(4)), ['z~>']);
    assert.deepEqual(ascii85Lines(Buffer.from('.')), ['/c~>']);
  });
  it('reads EPS through Ghostscript at 300 dpi', async () => {
    const eps = (await run(await makeImage(dir, 'vec.png', 72, 36), { format: 'eps' })).path;
    const r = await run(eps, { format: 'png' });
    const raw = await sharp(r.path).raw().toBuffer({ resolveWithObject: true });
    assert.deepEqual([raw.info.width, raw.info.height], [300, 150]);
    assert.ok(raw.data[0]! > 250 && raw.data[2]! < 10);
  });
  it('keeps animation GIF → WebP and rejects unknown formats', async () => {
    const frames = await Promise.all(
      [0, 1].map((i) =>
        sharp({ create: { width: 16, height: 16, channels: 4, background: { r: 200 * i, g: 50, b: 0, alpha: 1 } } })
          .png()
          .toBuffer(),
      ),
    );
    const gif = path.join(dir, 'a.gif');
    await sharp(frames, { join: { animated: true } })
      .gif()
      .toFile(gif);
    const r = await run(gif, { format: 'webp' });
    assert.equal((await sharp(r.path).metadata()).pages, 2);
    await assert.rejects(run(gif, { format: 'bmp' }), (e: KilnError) => e.code === 'VALIDATION_ERROR');
    await assert.rejects(run(gif, { format: 'png', quality: 0 }), (e: KilnError) => e.code === 'VALIDATION_ERROR');
  });
  // Found by the hostile corpus: sharp writes the IFD after the pixels, so a TIFF cut in half has a header
  // pointing past its end; file-type then names nothing and the TIFF was refused as an unknown file.
  it('a TIFF cut before its IFD is refused as an image that does not decode, not as an unknown type', async () => {
    const tif = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#3366cc' } })
      .tiff()
      .toBuffer();
    const cut = path.join(dir, 'cut.tif');
    writeFileSync(cut, tif.subarray(0, tif.readUInt32LE(4)));
    await assert.rejects(run(cut, { format: 'png' }), (e: KilnError) => {
      assert.equal(e.code, 'UNSUPPORTED_INPUT');
      assert.match(e.message, /could not be decoded/);
      return true;
    });
  });
  it('a Photoshop file cut in its layer data is refused, naming ImageMagick as what could not read it', async () => {
    const psd = path.join(dir, 'whole.psd');
    execFileSync('/usr/bin/convert', [await makeImage(dir, 'for-psd.png', 64, 48), `psd:${psd}`]);
    const cut = path.join(dir, 'cut.psd');
    writeFileSync(cut, cutInLayers(readFileSync(psd)));
    await assert.rejects(run(cut, { format: 'png' }), (e: KilnError) => {
      assert.equal(e.code, 'UNSUPPORTED_INPUT');
      assert.match(e.message, /^ImageMagick could not read the PSD file: .*unexpected end-of-file/);
      return true;
    });
  });
  it('runs from the CLI, including the png-to-eps and eps-to-png presets', async () => {
    const src = await makeImage(dir, 'cli.png', 40, 20);
    const out = path.join(dir, 'cli.webp');
    const r = await kiln(['convert', src, '--format', 'webp', '--quality', '50', '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((await sharp(out).metadata()).format, 'webp');
    const eps = path.join(dir, 'cli.eps');
    const p = await kiln(['png-to-eps', src, '-o', eps]);
    assert.equal(p.code, 0, p.stderr);
    const png = path.join(dir, 'cli-back.png');
    const q = await kiln(['eps-to-png', eps, '-o', png]);
    assert.equal(q.code, 0, q.stderr);
    assert.equal((await sharp(png).metadata()).width, Math.round((40 * 300) / 72));
  });
});
