import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import sharp from 'sharp';
import type { KilnError } from '../../../src/core/errors.js';
import { sanitizeSvg } from '../../../src/tools/image/_shared/svg-sanitize.js';
import { kiln } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/fixtures.js';
import { pixel, runB, unzip } from './b-helpers.js';

const dir = tempDir();
const COLORS = ['#ff0000', '#00ff00', '#0000ff', '#ffff00'];
const DELAYS = [100, 200, 300, 400];

async function animatedGif(name: string, opts: { gradient?: boolean; loop?: number } = {}): Promise<string> {
  const frames = await Promise.all(
    COLORS.map(async (c, i) => {
      if (!opts.gradient)
        return sharp({ create: { width: 40, height: 30, channels: 4, background: c } })
          .raw()
          .toBuffer();
      const b = Buffer.alloc(40 * 30 * 4);
      for (let p = 0; p < 40 * 30; p++) b.set([(p % 40) * 6, Math.floor(p / 40) * 8, i * 60, 255], p * 4);
      return b;
    }),
  );
  const p = path.join(dir, name);
  await sharp(Buffer.concat(frames), { raw: { width: 40, height: 120, channels: 4, pageHeight: 30 } } as never)
    .gif({ delay: DELAYS, loop: opts.loop ?? 0 })
    .toFile(p);
  return p;
}

async function anim(
  file: string,
): Promise<{ pages: number; width: number; height: number; delay: number[]; loop: number; format: string }> {
  const m = await sharp(file, { animated: true }).metadata();
  return {
    pages: m.pages ?? 1,
    width: m.width!,
    height: m.pageHeight ?? m.height!,
    delay: m.delay ?? [],
    loop: m.loop ?? 0,
    format: m.format!,
  };
}

async function framePixel(file: string | Buffer, frame: number, x: number, y: number): Promise<number[]> {
  const buf = await sharp(file, { page: frame }).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const i = (y * buf.info.width + x) * 4;
  return [...buf.data.subarray(i, i + 4)];
}

describe('svg-to-raster', () => {
  const svg =
    '<svg xmlns="http://www.w3.org/2000/svg" width="100" height="50" viewBox="0 0 100 50"><rect width="50" height="50" fill="#ff0000"/><rect x="50" width="50" height="50" fill="#0000ff" fill-opacity="0.5"/></svg>';
  const file = path.join(dir, 'shape.svg');
  before(() => writeFileSync(file, svg));

  it('renders at width (aspect kept), at dpi × scale, and exact width × height', async () => {
    const a = await runB(dir, 'svg-to-raster', [file], { width: 40 });
    const am = await sharp(a.file!).metadata();
    assert.deepEqual([am.width, am.height, am.format], [40, 20, 'png']);
    assert.deepEqual(await pixel(a.file!, 10, 10), [255, 0, 0, 255]);
    assert.ok(Math.abs((await pixel(a.file!, 30, 10))[3]! - 128) < 3, 'transparent background kept');
    const b = await runB(dir, 'svg-to-raster', [file], { dpi: 72, scale: 2 });
    assert.deepEqual([(await sharp(b.file!).metadata()).width, (await sharp(b.file!).metadata()).height], [200, 100]);
    const c = await runB(dir, 'svg-to-raster', [file], {});
    assert.equal((await sharp(c.file!).metadata()).width, Math.round((100 * 300) / 72));
    assert.equal((await sharp(c.file!).metadata()).density, 300);
    const d = await runB(dir, 'svg-to-raster', [file], { width: 30, height: 30 });
    assert.deepEqual([(await sharp(d.file!).metadata()).width, (await sharp(d.file!).metadata()).height], [30, 30]);
  });
  it('writes every format; background fills behind the drawing', async () => {
    for (const format of ['png', 'jpeg', 'webp', 'avif', 'tiff', 'gif', 'heif']) {
      const r = await runB(dir, 'svg-to-raster', [file], { format, width: 64, background: '#00ff00', quality: 70 });
      const m = await sharp(r.file!).metadata();
      // libvips reports AVIF as HEIF with AV1 compression.
      assert.equal(m.format, format === 'avif' ? 'heif' : format, format);
      if (format === 'avif') assert.equal(m.compression, 'av1');
      assert.equal(m.width, 64);
    }
    const r = await runB(dir, 'svg-to-raster', [file], { width: 100, background: '#00ff00' });
    const p = await pixel(r.file!, 75, 25);
    assert.ok(Math.abs(p[1]! - 128) < 4 && Math.abs(p[2]! - 128) < 4 && p[3] === 255, `blue 50% over green: ${p}`);
    const j = await runB(dir, 'svg-to-raster', [file], { width: 100, format: 'jpeg' });
    const jp = await pixel(j.file!, 75, 25);
    assert.ok(jp[0]! > 110 && jp[0]! < 145 && jp[2]! > 240, `jpeg flattens on white: ${jp}`);
  });
  it('a PNG keeps full colour: the default quality (for lossy formats) does not quantise it to a palette', async () => {
    const grad = path.join(dir, 'gradient.svg');
    writeFileSync(
      grad,
      '<svg xmlns="http://www.w3.org/2000/svg" width="256" height="256"><defs><linearGradient id="h"><stop offset="0" stop-color="#000000"/><stop offset="1" stop-color="#ff0000"/></linearGradient><linearGradient id="v" x2="0" y2="1"><stop offset="0" stop-color="#00ff00" stop-opacity="0"/><stop offset="1" stop-color="#00ff00"/></linearGradient></defs><rect width="256" height="256" fill="url(#h)"/><rect width="256" height="256" fill="url(#v)"/></svg>',
    );
    const r = await runB(dir, 'svg-to-raster', [grad], { width: 256 });
    assert.equal((await sharp(r.file!).metadata()).isPalette, false);
    const { data, info } = await sharp(r.file!).raw().toBuffer({ resolveWithObject: true });
    const colours = new Set<number>();
    for (let i = 0; i < data.length; i += info.channels) colours.add((data[i]! << 16) | (data[i + 1]! << 8) | data[i + 2]!);
    assert.ok(colours.size > 256, `${colours.size} colours`);
  });
  it('reads .svgz', async () => {
    const z = path.join(dir, 'shape.svgz');
    writeFileSync(z, gzipSync(svg));
    const r = await runB(dir, 'svg-to-raster', [z], { width: 20 });
    assert.equal((await sharp(r.file!).metadata()).width, 20);
  });
  it('removes scripts, handlers, foreignObject and every external reference; the renderer makes no request', async () => {
    const hits: string[] = [];
    const server = http.createServer((req, res) => {
      hits.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(readFileSync(path.join(dir, 'shape.svg')));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    after(() => server.close());
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const green = (
      await sharp({ create: { width: 4, height: 4, channels: 3, background: '#00ff00' } })
        .png()
        .toBuffer()
    ).toString('base64');
    const evil = `<?xml version="1.0"?>
<?xml-stylesheet href="${base}/pi.css"?>
<!DOCTYPE svg [<!ENTITY ext SYSTEM "${base}/entity">]>
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="100" height="50" onload="fetch('${base}/onload')">
  <style>@import url(${base}/import.css); .a { fill: url('${base}/paint.svg#p'); }</style>
  <script>fetch('${base}/script')</script>
  <script xlink:href="${base}/script.js"/>
  <foreignObject width="10" height="10"><iframe xmlns="http://www.w3.org/1999/xhtml" src="${base}/iframe"></iframe></foreignObject>
  <image href="${base}/image.png" x="0" y="0" width="50" height="50"/>
  <image xlink:href="${base}/image2.png" x="0" y="0" width="50" height="50"/>
  <image href="file:///etc/passwd" x="0" y="0" width="50" height="50"/>
  <use href="${base}/sprite.svg#icon"/>
  <rect class="a" width="10" height="10" style="fill: url(${base}/style.svg#f)" onclick="x()"/>
  <rect x="10" width="10" height="10" fill="url(${base}/fill.svg#g)"/>
  <a href="javascript:fetch('${base}/js')"><rect x="20" width="5" height="5"/></a>
  <image x="0" y="0" width="5" height="5" href="#nothing"><set attributeName="href" to="${base}/smil.png"/></image>
  <image href="data:image/png;base64,${green}" x="50" y="0" width="50" height="50"/>
</svg>`;
    const { svg: clean, report } = sanitizeSvg(evil);
    assert.ok(!clean.includes('127.0.0.1'), clean);
    assert.ok(!/script|foreignObject|onload|onclick|iframe|file:|DOCTYPE|ENTITY|xml-stylesheet|javascript|<set/i.test(clean), clean);
    assert.ok(clean.includes('data:image/png;base64,'));
    assert.ok(
      report.removedReferences >= 8 && report.removedElements >= 4 && report.removedAttributes >= 2 && report.removedDoctype,
      JSON.stringify(report),
    );
    const f = path.join(dir, 'evil.svg');
    writeFileSync(f, evil);
    const r = await runB(dir, 'svg-to-raster', [f], { dpi: 72 });
    await new Promise((res) => setTimeout(res, 300));
    assert.deepEqual(hits, []);
    assert.deepEqual(await pixel(r.file!, 75, 25), [0, 255, 0, 255], 'the embedded data: image still renders');
    assert.equal((await pixel(r.file!, 25, 25))[3], 0, 'the external image did not render');
  });
  it('rejects broken SVG and non-SVG', async () => {
    const bad = path.join(dir, 'bad.svg');
    writeFileSync(bad, '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect</svg>');
    await assert.rejects(runB(dir, 'svg-to-raster', [bad], {}), (e: KilnError) => e.code === 'UNSUPPORTED_INPUT');
    const png = path.join(dir, 'not.png');
    await sharp({ create: { width: 4, height: 4, channels: 3, background: '#000' } })
      .png()
      .toFile(png);
    await assert.rejects(runB(dir, 'svg-to-raster', [png], {}), (e: KilnError) => e.code === 'UNSUPPORTED_INPUT');
    await assert.rejects(
      runB(dir, 'svg-to-raster', [path.join(dir, 'shape.svg')], { scale: 20, dpi: 2400, width: undefined }),
      (e: KilnError) => e.code === 'LIMIT_EXCEEDED' || e.code === 'VALIDATION_ERROR',
    );
  });
});

describe('vectorize', () => {
  const shape = path.join(dir, 'shape.png');
  before(async () => {
    const svg =
      '<svg xmlns="http://www.w3.org/2000/svg" width="200" height="150"><rect width="200" height="150" fill="#fff"/><circle cx="70" cy="75" r="50" fill="#000"/><rect x="130" y="30" width="50" height="90" fill="#cc0033"/><rect x="20" y="10" width="3" height="3" fill="#000"/></svg>';
    await sharp(Buffer.from(svg)).png().toFile(shape);
  });
  async function mismatch(svgFile: string, threshold = 128): Promise<number> {
    const a = await sharp(shape).flatten({ background: '#fff' }).greyscale().raw().toBuffer();
    const b = await sharp(readFileSync(svgFile)).resize(200, 150).flatten({ background: '#fff' }).greyscale().raw().toBuffer();
    let diff = 0;
    for (let i = 0; i < a.length; i++) if (a[i]! < threshold !== b[i]! < threshold) diff++;
    return diff / a.length;
  }
  it('bw: valid SVG from potrace that renders back to the same shapes', async () => {
    const r = await runB(dir, 'vectorize', [shape], { filterSpeckle: 2 });
    const text = readFileSync(r.file!, 'utf8');
    assert.match(text, /^<\?xml[^>]*>\s*<svg[^>]*width="200" height="150"/);
    const m = await sharp(readFileSync(r.file!)).metadata();
    assert.deepEqual([m.format, m.width, m.height], ['svg', 200, 150]);
    const mis = await mismatch(r.file!);
    assert.ok(mis < 0.01, `mismatch ${mis}`);
    assert.match(text, /\bc-?\d/, 'spline mode has curves');
  });
  it('bw: threshold, filterSpeckle and polygon mode', async () => {
    const high = await runB(dir, 'vectorize', [shape], { threshold: 40, filterSpeckle: 2 });
    // #cc0033 is lighter than 40 in grey: the red bar is not ink at threshold 40.
    assert.equal((await pixel(await sharp(readFileSync(high.file!)).png().toBuffer(), 155, 75))[3], 0);
    const withDot = await runB(dir, 'vectorize', [shape], { filterSpeckle: 1 });
    const noDot = await runB(dir, 'vectorize', [shape], { filterSpeckle: 20 });
    assert.ok((await pixel(await sharp(readFileSync(withDot.file!)).png().toBuffer(), 21, 11))[3]! > 128);
    assert.equal((await pixel(await sharp(readFileSync(noDot.file!)).png().toBuffer(), 21, 11))[3], 0);
    const poly = await runB(dir, 'vectorize', [shape], { pathMode: 'polygon' });
    const d = /<path d="([^"]+)"/.exec(readFileSync(poly.file!, 'utf8'))![1]!;
    assert.ok(!/c/.test(d), 'polygon mode has no curves');
    assert.ok((await mismatch(poly.file!)) < 0.02);
    const none = await runB(dir, 'vectorize', [shape], { pathMode: 'none' });
    assert.ok((await mismatch(none.file!)) < 0.02);
  });
  it('traces a Photoshop file (psd-to-svg preset input) through ImageMagick', async () => {
    const psd = path.join(dir, 'shape.psd');
    execFileSync('/usr/bin/convert', [shape, psd]);
    const r = await runB(dir, 'vectorize', [psd], { filterSpeckle: 2 });
    assert.ok((await mismatch(r.file!)) < 0.01);
  });
  it('color: layered SVG that renders back close to the source', async () => {
    const r = await runB(dir, 'vectorize', [shape], { colorMode: 'color', colorPrecision: 4, filterSpeckle: 1 });
    const text = readFileSync(r.file!, 'utf8');
    assert.match(text, /<svg[^>]*width="200" height="150"/);
    assert.ok((text.match(/fill="rgb\(/g) ?? []).length >= 3);
    const a = await sharp(shape).removeAlpha().raw().toBuffer();
    const b = await sharp(readFileSync(r.file!)).resize(200, 150).flatten({ background: '#fff' }).removeAlpha().raw().toBuffer();
    let sum = 0;
    for (let i = 0; i < a.length; i++) sum += Math.abs(a[i]! - b[i]!);
    assert.ok(sum / a.length < 12, `mean abs diff ${sum / a.length}`);
    for (const pathMode of ['none', 'polygon']) {
      const p = await runB(dir, 'vectorize', [shape], { colorMode: 'color', pathMode });
      assert.ok(!/ Q /.test(readFileSync(p.file!, 'utf8')), `${pathMode} has no quadratic curves`);
    }
  });
});

describe('gif-tools', () => {
  it('resize keeps every frame and delay; loop is set', async () => {
    const g = await animatedGif('a.gif');
    const r = await runB(dir, 'gif-tools', [g], { width: 20, loop: 3 });
    const a = await anim(r.file!);
    assert.deepEqual([a.pages, a.width, a.height, a.delay, a.loop], [4, 20, 15, DELAYS, 3]);
    const p = await runB(dir, 'gif-tools', [g], { percentage: 50 });
    assert.deepEqual([(await anim(p.file!)).width, (await anim(p.file!)).height], [20, 15]);
    await assert.rejects(runB(dir, 'gif-tools', [g], { action: 'resize' }), (e: KilnError) => e.code === 'VALIDATION_ERROR');
  });
  it('reverse and speed', async () => {
    const g = await animatedGif('b.gif');
    const r = await runB(dir, 'gif-tools', [g], { action: 'reverse' });
    const a = await anim(r.file!);
    assert.deepEqual(a.delay, [...DELAYS].reverse());
    assert.deepEqual((await framePixel(r.file!, 0, 5, 5)).slice(0, 3), [255, 255, 0]);
    assert.deepEqual((await framePixel(r.file!, 3, 5, 5)).slice(0, 3), [255, 0, 0]);
    const fast = await runB(dir, 'gif-tools', [g], { action: 'speed', speedFactor: 2 });
    assert.deepEqual((await anim(fast.file!)).delay, [50, 100, 150, 200]);
    const fastest = await runB(dir, 'gif-tools', [g], { action: 'speed', speedFactor: 10 });
    assert.deepEqual((await anim(fastest.file!)).delay, [20, 20, 30, 40]);
    assert.equal(fastest.data!.minimumDelayApplied, true);
  });
  it('extract-frames: a single frame, a range and all as ZIP', async () => {
    const g = await animatedGif('c.gif');
    const one = await runB(dir, 'gif-tools', [g], { action: 'extract-frames', frameNumber: 2 });
    assert.equal((await sharp(one.file!).metadata()).format, 'png');
    assert.deepEqual((await pixel(one.file!, 5, 5)).slice(0, 3), [0, 0, 255]);
    const all = await unzip(
      (await runB(dir, 'gif-tools', [g], { action: 'extract-frames', extractMode: 'all', extractFormat: 'webp' })).file!,
    );
    assert.equal(all.length, 4);
    assert.equal((await sharp(all[1]!.data).metadata()).format, 'webp');
    const range = await unzip(
      (await runB(dir, 'gif-tools', [g], { action: 'extract-frames', extractMode: 'range', frameStart: 1, frameEnd: 2 })).file!,
    );
    assert.deepEqual(range.map((e) => e.name).sort(), ['c-frame-1.png', 'c-frame-2.png']);
    assert.deepEqual((await pixel(range.find((e) => e.name === 'c-frame-1.png')!.data, 1, 1)).slice(0, 3), [0, 255, 0]);
    await assert.rejects(
      runB(dir, 'gif-tools', [g], { action: 'extract-frames', frameNumber: 4 }),
      (e: KilnError) => e.code === 'VALIDATION_ERROR' && /4 frames/.test(e.message),
    );
  });
  it('rotate, flip and add-text on every frame', async () => {
    const g = await animatedGif('d.gif');
    const r = await runB(dir, 'gif-tools', [g], { action: 'rotate', angle: 90 });
    const a = await anim(r.file!);
    assert.deepEqual([a.pages, a.width, a.height], [4, 30, 40]);
    await assert.rejects(runB(dir, 'gif-tools', [g], { action: 'rotate', angle: 45 }), (e: KilnError) => e.code === 'VALIDATION_ERROR');
    const t = await runB(dir, 'gif-tools', [g], { action: 'add-text', text: 'HI', fontSize: 16, color: '#ffffff', position: 'bottom' });
    assert.equal((await anim(t.file!)).pages, 4);
    for (const frame of [0, 3]) {
      const { data } = await sharp(t.file!, { page: frame }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
      let white = 0;
      for (let i = 0; i < data.length; i += 3) if (data[i]! > 230 && data[i + 1]! > 230 && data[i + 2]! > 230) white++;
      assert.ok(white > 10, `frame ${frame} has caption pixels (${white})`);
    }
    await assert.rejects(runB(dir, 'gif-tools', [g], { action: 'add-text' }), (e: KilnError) => e.code === 'VALIDATION_ERROR');
  });
  it('optimize reduces the palette; WebP and APNG inputs stay animated', async () => {
    const g = await animatedGif('e.gif', { gradient: true });
    const r = await runB(dir, 'gif-tools', [g], { action: 'optimize', colors: 4, dither: 0 });
    assert.equal((await anim(r.file!)).pages, 4);
    const { data } = await sharp(r.file!, { page: 1 }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const colours = new Set<number>();
    for (let i = 0; i < data.length; i += 3) colours.add((data[i]! << 16) | (data[i + 1]! << 8) | data[i + 2]!);
    assert.ok(colours.size <= 4, `${colours.size} colours`);
    const webp = path.join(dir, 'e.webp');
    await sharp(g, { animated: true }).webp({ lossless: true }).toFile(webp);
    const fromWebp = await runB(dir, 'gif-tools', [webp], { action: 'reverse' });
    assert.deepEqual([(await anim(fromWebp.file!)).pages, (await anim(fromWebp.file!)).format], [4, 'gif']);
    const apng = path.join(dir, 'e.apng');
    execFileSync('ffmpeg', ['-v', 'error', '-y', '-i', g, '-plays', '0', '-f', 'apng', apng]);
    const fromApng = await runB(dir, 'gif-tools', [apng], { width: 20 });
    assert.deepEqual([(await anim(fromApng.file!)).pages, (await anim(fromApng.file!)).width], [4, 20]);
  });
});

describe('gif-webp', () => {
  it('GIF → animated WebP → GIF keeps frames and delays', async () => {
    const g = await animatedGif('f.gif', { loop: 2 });
    const w = await runB(dir, 'gif-webp', [g], { lossless: true });
    const a = await anim(w.file!);
    assert.deepEqual([a.format, a.pages, a.delay, a.loop], ['webp', 4, DELAYS, 2]);
    assert.deepEqual((await framePixel(w.file!, 2, 5, 5)).slice(0, 3), [0, 0, 255]);
    const back = await runB(dir, 'gif-webp', [w.file!], { resizePercent: 50 });
    const b = await anim(back.file!);
    assert.deepEqual([b.format, b.pages, b.width, b.height, b.delay], ['gif', 4, 20, 15, DELAYS]);
    const lossy = await runB(dir, 'gif-webp', [g], { quality: 10 });
    assert.equal((await anim(lossy.file!)).pages, 4);
    await assert.rejects(runB(dir, 'gif-webp', [g], { resizePercent: 5 }), (e: KilnError) => e.code === 'VALIDATION_ERROR');
  });
});

describe('format CLI', () => {
  it('gif-tools extract-frames writes a ZIP; svg-to-raster and vectorize run from the command line', async () => {
    const g = await animatedGif('cli.gif');
    const zip = path.join(dir, 'cli-frames.zip');
    const r = await kiln(['gif-tools', g, '--action', 'extract-frames', '--extract-mode', 'all', '-o', zip]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((await unzip(zip)).length, 4);
    const svg = path.join(dir, 'cli.svg');
    writeFileSync(svg, '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10" fill="#000"/></svg>');
    const png = path.join(dir, 'cli.png');
    const s = await kiln(['svg-to-raster', svg, '--width', '64', '-o', png]);
    assert.equal(s.code, 0, s.stderr);
    assert.equal((await sharp(png).metadata()).width, 64);
    const v = await kiln(['vectorize', png, '-o', path.join(dir, 'cli-back.svg')]);
    assert.equal(v.code, 0, v.stderr);
    assert.match(readFileSync(path.join(dir, 'cli-back.svg'), 'utf8'), /<svg/);
    const rot = await kiln(['gif-tools', g, '--action', 'rotate', '--angle', '270', '-o', path.join(dir, 'cli-rot.gif')]);
    assert.equal(rot.code, 0, rot.stderr);
    assert.equal((await anim(path.join(dir, 'cli-rot.gif'))).height, 40);
  });
});
