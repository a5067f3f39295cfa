import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import type { KilnError } from '../../../src/core/errors.js';
import { readWithZbar } from '../../../src/engines/zxing.js';
import { kiln } from '../../helpers/cli.js';
import { makeImage, tempDir } from '../../helpers/fixtures.js';
import { runB } from './b-helpers.js';

const dir = tempDir();

interface Code {
  format: string;
  text: string;
  position: { topLeft: { x: number; y: number }; bottomRight: { x: number; y: number } };
}
async function read(file: string): Promise<Code[]> {
  const r = await runB(dir, 'barcode-read', [file], {});
  return (r.data as { codes: Code[] }).codes;
}

describe('barcode-generate → barcode-read', () => {
  const cases: [string, string, string[], string][] = [
    ['code128', 'Kiln-128 ok', ['Code128'], 'Kiln-128 ok'],
    ['ean13', '590123412345', ['EAN-13'], '5901234123457'],
    ['ean13', '4006381333931', ['EAN-13'], '4006381333931'],
    // zxing reports UPC-A as the EAN-13 it is a subset of (leading 0).
    ['upca', '03600029145', ['UPC-A', 'EAN-13'], '036000291452'],
    ['code39', 'KILN-39 $', ['Code39'], 'KILN-39 $'],
    ['itf14', '1001234567890', ['ITF'], '10012345678902'],
    ['datamatrix', 'Data Matrix: ünïcode ✓', ['DataMatrix'], 'Data Matrix: ünïcode ✓'],
  ];
  for (const [type, text, formats, expected] of cases) {
    it(`${type} "${text}" reads back`, async () => {
      const g = await runB(dir, 'barcode-generate', [], { type, text, scale: 2 });
      const meta = await sharp(g.file!).metadata();
      assert.equal(meta.format, 'png');
      const codes = await read(g.file!);
      assert.equal(codes.length, 1, JSON.stringify(codes));
      assert.ok(formats.includes(codes[0]!.format), codes[0]!.format);
      assert.ok(codes[0]!.text === expected || codes[0]!.text === '0' + expected, codes[0]!.text);
    });
  }
  it('includeText makes the image taller (text row under the bars)', async () => {
    const a = await runB(dir, 'barcode-generate', [], { type: 'code128', text: 'ABC', includeText: true });
    const b = await runB(dir, 'barcode-generate', [], { type: 'code128', text: 'ABC', includeText: false });
    assert.ok((await sharp(a.file!).metadata()).height! > (await sharp(b.file!).metadata()).height!);
  });
  it('rejects text the symbology cannot carry', async () => {
    const bad = async (s: Record<string, unknown>, re: RegExp) =>
      assert.rejects(runB(dir, 'barcode-generate', [], s), (e: KilnError) => e.code === 'VALIDATION_ERROR' && re.test(e.message));
    await bad({ type: 'ean13', text: '5901234123458' }, /check digit.*should be 7/);
    await bad({ type: 'ean13', text: '12345' }, /12 digits/);
    await bad({ type: 'upca', text: '03600029145X' }, /UPC-A/);
    await bad({ type: 'code39', text: 'lower' }, /Code 39/);
    await bad({ type: 'code128', text: 'naïve' }, /ASCII/);
    await bad({ type: 'itf14', text: '10012345678903' }, /check digit/);
    await bad({ type: 'qr', text: 'x' }, /type/);
    await bad({ text: 'x', scale: 9 }, /scale/);
  });
});

describe('qr-generate', () => {
  for (const dotStyle of ['square', 'rounded', 'dots']) {
    for (const cornerStyle of ['square', 'rounded', 'dot']) {
      it(`${dotStyle} modules with ${cornerStyle} corners read back`, async () => {
        const data = `https://example.com/${dotStyle}/${cornerStyle}`;
        const r = await runB(dir, 'qr-generate', [], { data, size: 300, dotStyle, cornerStyle });
        const meta = await sharp(r.file!).metadata();
        assert.deepEqual([meta.width, meta.height, meta.format], [300, 300, 'png']);
        const codes = await read(r.file!);
        assert.deepEqual(
          codes.map((c) => [c.format, c.text]),
          [['QRCode', data]],
        );
      });
    }
  }
  it('uses colorDark/colorLight and the margin as quiet zone', async () => {
    const r = await runB(dir, 'qr-generate', [], {
      data: 'colours',
      size: 290,
      margin: 4,
      colorDark: '#003366',
      colorLight: '#ffeecc',
      errorCorrectionLevel: 'L',
    });
    const { data, info } = await sharp(r.file!).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const px = (x: number, y: number) => [...data.subarray((y * info.width + x) * 3, (y * info.width + x) * 3 + 3)];
    // Version 1 (21 modules) + 2×4 quiet modules = 29 modules of 10 px: the finder's corner starts at 40 px.
    assert.deepEqual(px(5, 5), [0xff, 0xee, 0xcc]);
    assert.deepEqual(px(45, 45), [0x00, 0x33, 0x66]);
    assert.equal(r.data!.errorCorrectionLevel, 'L');
    assert.equal((await read(r.file!))[0]!.text, 'colours');
  });
  it('centres a logo, raises error correction to H and still reads', async () => {
    const logo = await makeImage(dir, 'logo.png', 64, 64);
    const r = await runB(
      dir,
      'qr-generate',
      [],
      { data: 'with a logo in the middle', size: 400, dotStyle: 'rounded', errorCorrectionLevel: 'L' },
      { logo: [logo] },
    );
    assert.equal(r.data!.errorCorrectionLevel, 'H');
    const { data, info } = await sharp(r.file!).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const c = (200 * info.width + 200) * 3;
    const [red, , blue] = [data[c]!, data[c + 1]!, data[c + 2]!];
    assert.ok(red > 200 || blue > 200, 'logo pixels in the centre');
    assert.equal((await read(r.file!))[0]!.text, 'with a logo in the middle');
  });
  it('rejects missing data, bad colours and data that does not fit', async () => {
    await assert.rejects(runB(dir, 'qr-generate', [], {}), (e: KilnError) => e.code === 'VALIDATION_ERROR');
    await assert.rejects(
      runB(dir, 'qr-generate', [], { data: 'x', colorDark: 'reddish' }),
      (e: KilnError) => e.code === 'VALIDATION_ERROR',
    );
    // CSS colour names are colours too: one colour parser for every image tool.
    const red = await runB(dir, 'qr-generate', [], { data: 'x', colorDark: 'red' });
    const { data: px } = await sharp(red.file!).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    assert.ok(
      [...Array(px.length / 3).keys()].some((i) => px[i * 3] === 255 && px[i * 3 + 1] === 0 && px[i * 3 + 2] === 0),
      'red modules',
    );
    await assert.rejects(
      runB(dir, 'qr-generate', [], { data: 'x'.repeat(2000), errorCorrectionLevel: 'H', size: 100 }),
      (e: KilnError) => e.code === 'VALIDATION_ERROR',
    );
  });
});

describe('barcode-read', () => {
  it('finds several codes in one image with their positions', async () => {
    const q = await runB(dir, 'qr-generate', [], { data: 'left code', size: 200 });
    const b = await runB(dir, 'barcode-generate', [], { type: 'code128', text: 'RIGHT', scale: 2 });
    const bm = await sharp(b.file!).metadata();
    const both = path.join(dir, 'both.png');
    await sharp({ create: { width: 260 + bm.width!, height: Math.max(220, bm.height! + 20), channels: 3, background: '#ffffff' } })
      .composite([
        { input: q.file!, left: 10, top: 10 },
        { input: b.file!, left: 240, top: 10 },
      ])
      .png()
      .toFile(both);
    const codes = await read(both);
    assert.equal(codes.length, 2, JSON.stringify(codes));
    const qr = codes.find((c) => c.format === 'QRCode')!;
    const bar = codes.find((c) => c.format === 'Code128')!;
    assert.equal(qr.text, 'left code');
    assert.equal(bar.text, 'RIGHT');
    assert.ok(qr.position.topLeft.x < 240 && bar.position.topLeft.x >= 240, JSON.stringify([qr.position, bar.position]));
  });
  it('returns an empty list for an image without codes', async () => {
    const plain = await makeImage(dir, 'plain.png', 80, 60);
    const r = await runB(dir, 'barcode-read', [plain], {});
    assert.deepEqual([r.data!.count, r.data!.codes], [0, []]);
  });
  it('zbar gets the decoded pixels, never the upload: an SVG with external references reads as no codes', async () => {
    // zbarimg would hand the SVG to ImageMagick, which follows its references (and failed with a temp path).
    const svg = path.join(dir, 'refs.svg');
    writeFileSync(
      svg,
      '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="40" height="40">' +
        '<rect width="40" height="40" fill="#fff"/><image xlink:href="file:///etc/passwd" width="40" height="40"/></svg>',
    );
    const r = await runB(dir, 'barcode-read', [svg], {});
    assert.deepEqual([r.data!.count, r.data!.width], [0, 40]);
  });
  it('the zbar fallback engine decodes an EAN-13', async () => {
    const g = await runB(dir, 'barcode-generate', [], { type: 'ean13', text: '4006381333931' });
    const codes = await readWithZbar(g.file!, { width: 1, height: 1 });
    assert.deepEqual(
      codes.map((c) => [c.format, c.text]),
      [['EAN-13', '4006381333931']],
    );
  });
});

describe('image-to-base64', () => {
  it('gives a data URI with the detected type, and plain base64', async () => {
    const src = await makeImage(dir, 'b64.webp', 20, 10);
    const uri = await runB(dir, 'image-to-base64', [src], {});
    const text = uri.data!.base64 as string;
    assert.ok(text.startsWith('data:image/webp;base64,'));
    assert.deepEqual(Buffer.from(text.split(',')[1]!, 'base64'), readFileSync(src));
    const plain = await runB(dir, 'image-to-base64', [src], { format: 'plain', mimeType: 'image/x-custom' });
    assert.deepEqual(Buffer.from(plain.data!.base64 as string, 'base64'), readFileSync(src));
    const custom = await runB(dir, 'image-to-base64', [src], { mimeType: 'image/x-custom' });
    assert.match(custom.data!.base64 as string, /^data:image\/x-custom;base64,/);
    await assert.rejects(runB(dir, 'image-to-base64', [src], { mimeType: 'not a type' }), (e: KilnError) => e.code === 'VALIDATION_ERROR');
  });
});

describe('lqip-placeholder', () => {
  it('makes a tiny blurred WebP whose data URI is the file', async () => {
    const src = await makeImage(dir, 'hero.jpg', 400, 200);
    const r = await runB(dir, 'lqip-placeholder', [src], {});
    const meta = await sharp(r.file!).metadata();
    assert.deepEqual([meta.format, meta.width, meta.height], ['webp', 16, 8]);
    const uri = r.data!.dataUri as string;
    assert.ok(uri.startsWith('data:image/webp;base64,'));
    assert.deepEqual(Buffer.from(uri.split(',')[1]!, 'base64'), readFileSync(r.file!));
  });
  it('solid is one colour: the image mean', async () => {
    const src = await makeImage(dir, 'halves.png', 100, 100);
    const r = await runB(dir, 'lqip-placeholder', [src], { strategy: 'solid', format: 'png', width: 8 });
    const st = await sharp(r.file!).stats();
    assert.ok(Math.abs(st.channels[0]!.mean - 127.5) < 3 && Math.abs(st.channels[2]!.mean - 127.5) < 3);
    assert.ok(st.channels.every((c) => c.stdev < 1));
  });
  it('pixelate keeps hard block edges; blur smooths them', async () => {
    const src = await makeImage(dir, 'edge.png', 64, 64);
    const px = async (strategy: string) => {
      const r = await runB(dir, 'lqip-placeholder', [src], { strategy, format: 'png', width: 32, quality: 100, blur: 4 });
      const { data } = await sharp(r.file!).removeAlpha().raw().toBuffer({ resolveWithObject: true });
      return [12, 15, 16].map((x) => data[(16 * 32 + x) * 3]!);
    };
    // 32 px wide in blocks of 4: x 12-15 is one block, 16 starts the next.
    const [p12, p15, p16] = await px('pixelate');
    assert.ok(p12 === p15 && p15! - p16! > 150, `pixelate ${p12} ${p15} ${p16}`);
    const [b12, b15, b16] = await px('blur');
    assert.ok(b12! > b15! && b15! > b16!, `blur ${b12} ${b15} ${b16}`);
  });
});

describe('utilities CLI', () => {
  it('barcode-generate writes a file that barcode-read --json decodes', async () => {
    const out = path.join(dir, 'cli-code.png');
    const g = await kiln(['barcode-generate', '--text', 'CLI 128', '--type', 'code128', '-o', out]);
    assert.equal(g.code, 0, g.stderr);
    const r = await kiln(['barcode-read', out, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const line = JSON.parse(r.stdout.trim().split('\n')[0]!) as { data: { codes: Code[] } };
    assert.equal(line.data.codes[0]!.text, 'CLI 128');
    const bad = await kiln(['barcode-generate', '--text', '5901234123458', '--type', 'ean13', '-o', path.join(dir, 'no.png')]);
    assert.equal(bad.code, 2);
  });
  it('qr-generate takes its logo with --logo', async () => {
    const logo = await makeImage(dir, 'cli-logo.png', 32, 32);
    const out = path.join(dir, 'cli-qr.png');
    const r = await kiln(['qr-generate', '--data', 'cli qr', '--logo', logo, '--size', '300', '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((await read(out))[0]!.text, 'cli qr');
  });
});

describe('utilities over HTTP', () => {
  it('qr-generate takes the logo part and JSON settings; barcode-read answers with data', async () => {
    const { filePart, form, startServer } = await import('../../helpers/server.js');
    const s = await startServer();
    try {
      const auth = { authorization: `Bearer ${s.token}` };
      const logo = await makeImage(dir, 'http-logo.png', 40, 40);
      const res = await fetch(`${s.url}/api/v1/tools/image/qr-generate`, {
        method: 'POST',
        headers: auth,
        body: await form({ logo: await filePart(logo), settings: JSON.stringify({ data: 'over http', size: 300, dotStyle: 'dots' }) }),
      });
      const body = (await res.json()) as { downloadUrl: string; data: { errorCorrectionLevel: string } };
      assert.equal(res.status, 200, JSON.stringify(body));
      assert.equal(body.data.errorCorrectionLevel, 'H');
      const png = path.join(dir, 'http-qr.png');
      (await import('node:fs')).writeFileSync(
        png,
        Buffer.from(await (await fetch(s.url + body.downloadUrl, { headers: auth })).arrayBuffer()),
      );
      const read = await fetch(`${s.url}/api/v1/tools/image/barcode-read`, {
        method: 'POST',
        headers: auth,
        body: await form({ file: await filePart(png) }),
      });
      const rb = (await read.json()) as { data: { codes: Code[] } };
      assert.equal(read.status, 200, JSON.stringify(rb));
      assert.deepEqual(
        rb.data.codes.map((c) => [c.format, c.text]),
        [['QRCode', 'over http']],
      );
      const gen = await fetch(`${s.url}/api/v1/tools/image/barcode-generate`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ text: '5901234123458', type: 'ean13' }),
      });
      assert.equal(gen.status, 400);
      assert.equal(((await gen.json()) as { error: { code: string } }).error.code, 'VALIDATION_ERROR');
    } finally {
      await s.close();
    }
  });
});
