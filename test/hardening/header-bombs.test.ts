/**
 * Every image format kiln reads is refused from its header when it declares more pixels than
 * KILN_MAX_PIXELS (src/tools/image/_shared/declared-size.ts), before any engine decodes it: the same
 * LIMIT_EXCEEDED and message for each, exit 2 from the CLI and 413 from the daemon. Before, the formats
 * other engines decode went through: a 116 KB Lab TIFF of 12000 × 10000 became 1.4 GB on disk through
 * the vips CLI, a 480 KB ZSTD TIFF declaring 60000 × 60000 3.6 GB, a 5 KB JPEG XL of 12000 × 10000 took
 * 1.5 GB of memory, and BMP, ICO and Photoshop files reached ImageMagick, whose refusals (when its own
 * limits were reached at all) spoke of its pixel cache. A small real file of each format still decodes.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp, { type Sharp } from 'sharp';
import { exec } from '../../src/core/process.js';
import { vipsEnv } from '../../src/engines/sharp.js';
import { kiln } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';
import {
  bmpBomb,
  gifBomb,
  heifBomb,
  icoBomb,
  icoDibBomb,
  jpegBomb,
  jxlBomb,
  jxlContainerBomb,
  pngBomb,
  psdBomb,
  svgBomb,
  tiffBomb,
  webpBomb,
} from '../helpers/header-bombs.js';
import { startServer, type TestServer } from '../helpers/server.js';

const dir = tempDir('kiln-header-bombs-');
/** The colour of every legitimate fixture: its decoded output must still be it. */
const BLUE = [0x20, 0x50, 0xc0];

/** A 60 × 40 image of BLUE as `encoder` writes it from a PNG. */
async function real(name: string, encode: (png: string, out: string) => Promise<unknown>): Promise<string> {
  const png = path.join(dir, `${name}.src.png`);
  await sharp({ create: { width: 60, height: 40, channels: 3, background: '#2050c0' } })
    .png()
    .toFile(png);
  const out = path.join(dir, name);
  await encode(png, out);
  return out;
}
const bySharp = (f: (s: Sharp) => Sharp) => (png: string, out: string) => f(sharp(png)).toFile(out);
const byVips =
  (suffix = '') =>
  (png: string, out: string) =>
    exec('vips', ['copy', png, `${out}${suffix}`], { env: vipsEnv() });
const byMagick =
  (prefix: string, ...args: string[]) =>
  (png: string, out: string) =>
    exec('convert', [png, ...args, `${prefix}:${out}`]);

interface Row {
  /** The bomb's file name (its kind is sniffed from its bytes; the name only shows in the message). */
  name: string;
  bomb: () => Buffer | Promise<Buffer>;
  /** What the header declares, as the message states it. */
  declares: string;
  /** A small real file of the same kind that must still decode (the bomb's base, where it is patched). */
  legit: string;
  /** The legitimate file is lossy: its colour may differ by this much. */
  tolerance?: number;
  /** The legitimate file is all black (L = 0 in Lab), not BLUE. */
  black?: boolean;
}

const files: Record<string, string> = {};
const rows: Row[] = [
  { name: 'bomb.png', bomb: () => pngBomb(60000, 60000), declares: '60000×60000 pixels (3600 MP)', legit: 'ok.png' },
  {
    name: 'bomb.jpg',
    bomb: () => jpegBomb(readFileSync(files['ok.jpg']!), 65500, 65500),
    declares: '65500×65500 pixels (4290 MP)',
    legit: 'ok.jpg',
    tolerance: 6,
  },
  { name: 'bomb.gif', bomb: () => gifBomb(65535, 65535), declares: '65535×65535 pixels (4295 MP)', legit: 'ok.gif', tolerance: 8 },
  {
    name: 'bomb.webp',
    bomb: () => webpBomb(readFileSync(files['ok.webp']!), 16383, 16383),
    declares: '16383×16383 pixels (268 MP)',
    legit: 'ok.webp',
    tolerance: 6,
  },
  {
    name: 'bomb.avif',
    bomb: () => heifBomb(readFileSync(files['ok.avif']!), 60000, 60000),
    declares: '60000×60000 pixels (3600 MP)',
    legit: 'ok.avif',
    tolerance: 8,
  },
  // HEVC: the vips CLI (Debian's libheif) decodes it; that libheif refuses more than 16384 a side itself.
  {
    name: 'bomb.heic',
    bomb: () => heifBomb(readFileSync(files['ok.heic']!), 16000, 16000),
    declares: '16000×16000 pixels (256 MP)',
    legit: 'ok.heic',
    tolerance: 8,
  },
  { name: 'bomb.tif', bomb: () => tiffBomb(60000, 60000), declares: '60000×60000 pixels (3600 MP)', legit: 'ok.tif' },
  // The TIFFs sharp cannot read go through the vips CLI (engines/tiff-probe.ts): 8-bit Lab and ZSTD.
  {
    name: 'lab.tif',
    bomb: () => tiffBomb(12000, 10000, { lab: true }),
    declares: '12000×10000 pixels (120 MP)',
    legit: 'ok-lab.tif',
    black: true,
  },
  {
    name: 'zstd.tif',
    bomb: async () => {
      // One row of zeros, compressed by the zstd program; every strip of the bomb points at it.
      const row = path.join(dir, 'row');
      writeFileSync(row, Buffer.alloc(60000));
      await exec('zstd', ['-q', '-f', row, '-o', `${row}.zst`]);
      return tiffBomb(60000, 60000, { compression: 50000, row: readFileSync(`${row}.zst`) });
    },
    declares: '60000×60000 pixels (3600 MP)',
    legit: 'ok-zstd.tif',
  },
  { name: 'bomb.bmp', bomb: () => bmpBomb(50000, 50000), declares: '50000×50000 pixels (2500 MP)', legit: 'ok.bmp' },
  // Within ImageMagick's own 16K-a-side limit, and a complete file: it would decode.
  { name: 'full.bmp', bomb: () => bmpBomb(12000, 10000, true), declares: '12000×10000 pixels (120 MP)', legit: 'ok.bmp' },
  { name: 'bomb.psd', bomb: () => psdBomb(30000, 30000), declares: '30000×30000 pixels (900 MP)', legit: 'ok.psd' },
  { name: 'bomb.psb', bomb: () => psdBomb(300000, 1000, { version: 2 }), declares: '300000×1000 pixels (300 MP)', legit: 'ok.psd' },
  { name: 'png-entry.ico', bomb: () => icoBomb(60000, 60000), declares: '60000×60000 pixels (3600 MP)', legit: 'ok.ico' },
  { name: 'dib-entry.ico', bomb: () => icoDibBomb(11000, 10000), declares: '11000×10000 pixels (110 MP)', legit: 'ok.ico' },
  {
    name: 'bomb.jxl',
    bomb: () => jxlBomb(readFileSync(files['ok.jxl']!), 16000, 16000),
    declares: '16000×16000 pixels (256 MP)',
    legit: 'ok.jxl',
  },
  {
    name: 'container.jxl',
    bomb: () => jxlContainerBomb(readFileSync(files['ok.jxl']!), 60000, 60000),
    declares: '60000×60000 pixels (3600 MP)',
    legit: 'ok.jxl',
  },
  { name: 'bomb.svg', bomb: () => svgBomb(60000, 60000), declares: '60000×60000 pixels (3600 MP)', legit: 'ok.svg' },
];

before(async () => {
  files['ok.png'] = await real(
    'ok.png',
    bySharp((s) => s.png()),
  );
  files['ok.jpg'] = await real(
    'ok.jpg',
    bySharp((s) => s.jpeg()),
  );
  files['ok.gif'] = await real(
    'ok.gif',
    bySharp((s) => s.gif()),
  );
  files['ok.webp'] = await real(
    'ok.webp',
    bySharp((s) => s.webp()),
  );
  files['ok.avif'] = await real(
    'ok.avif',
    bySharp((s) => s.avif()),
  );
  files['ok.tif'] = await real(
    'ok.tif',
    bySharp((s) => s.tiff()),
  );
  files['ok.heic'] = await real('ok.heic', byVips());
  files['ok.jxl'] = await real('ok.jxl', byVips());
  files['ok-zstd.tif'] = await real('ok-zstd.tif', byVips('[compression=zstd]'));
  files['ok.bmp'] = await real('ok.bmp', byMagick('bmp3'));
  files['ok.psd'] = await real('ok.psd', byMagick('psd'));
  files['ok.ico'] = await real('ok.ico', byMagick('ico', '-resize', '48x48'));
  // An 8-bit CIELab TIFF as libtiff lays one out (L = 0: black), which sharp cannot read.
  files['ok-lab.tif'] = path.join(dir, 'ok-lab.tif');
  writeFileSync(files['ok-lab.tif'], tiffBomb(60, 40, { lab: true }));
  files['ok.svg'] = path.join(dir, 'ok.svg');
  writeFileSync(
    files['ok.svg'],
    '<svg xmlns="http://www.w3.org/2000/svg" width="60" height="40"><rect width="60" height="40" fill="#2050c0"/></svg>',
  );
});

/** `kiln resize file --width 10` as JSON under `env`, to a PNG in a new folder (the CLI follows the name's format). */
async function resize(file: string, env: Record<string, string> = {}) {
  const out = path.join(dir, `out-${Math.random().toString(36).slice(2)}`);
  mkdirSync(out);
  const t0 = Date.now();
  const res = await kiln(['resize', file, '--width', '10', '-o', path.join(out, 'resized.png'), '--json'], { env });
  return { res, out, ms: Date.now() - t0, written: readdirSync(out) };
}

function refusal(r: Awaited<ReturnType<typeof resize>>) {
  assert.equal(r.res.code, 2, r.res.stdout + r.res.stderr);
  const { error } = JSON.parse(r.res.stdout) as { error: { code: string; message: string; details: Record<string, number> } };
  assert.equal(error.code, 'LIMIT_EXCEEDED', error.message);
  assert.deepEqual(r.written, [], 'nothing was written');
  return error;
}

describe('image inputs whose header declares more than KILN_MAX_PIXELS', () => {
  for (const row of rows) {
    it(`${row.name}: refused from its header (exit 2, LIMIT_EXCEEDED) at once; a small real ${path.extname(row.legit)} still resizes`, async () => {
      const bomb = path.join(dir, row.name);
      writeFileSync(bomb, await row.bomb());
      assert.ok(readFileSync(bomb).length < 1_000_000, `${row.name} is a small file`);
      const r = await resize(bomb);
      const e = refusal(r);
      assert.equal(e.message, `The image ${row.name} is ${row.declares}, more than the limit of 100000000 (KILN_MAX_PIXELS).`);
      assert.equal(e.details.limit, 100_000_000);
      // A kiln run starts in about 0.3 s; the vips CLI took 6-9 s over the TIFF bombs, writing gigabytes.
      assert.ok(r.ms < 5000, `took ${r.ms} ms`);

      const ok = await resize(files[row.legit]!);
      assert.equal(ok.res.code, 0, ok.res.stdout + ok.res.stderr);
      assert.equal(ok.written.length, 1, String(ok.written));
      const { data, info } = await sharp(path.join(ok.out, ok.written[0]!)).removeAlpha().raw().toBuffer({ resolveWithObject: true });
      assert.equal(info.width, 10);
      const want = row.black ? [0, 0, 0] : BLUE;
      const got = [...data.subarray((info.width * Math.floor(info.height / 2) + 5) * info.channels).subarray(0, 3)];
      for (let c = 0; c < 3; c++) assert.ok(Math.abs(got[c]! - want[c]!) <= (row.tolerance ?? 2), `${row.legit}: ${got} is not ${want}`);
    });
  }

  it('the small real files are refused too under a lower KILN_MAX_PIXELS: each reader parses what real encoders write', async () => {
    const legit = [...new Set(rows.map((r) => r.legit))];
    for (const name of legit) {
      const e = refusal(await resize(files[name]!, { KILN_MAX_PIXELS: '1000' }));
      const size = name === 'ok.ico' ? '48×32' : '60×40';
      const mp = name === 'ok.ico' ? '0.00154' : '0.0024';
      assert.equal(e.message, `The image ${name} is ${size} pixels (${mp} MP), more than the limit of 1000 (KILN_MAX_PIXELS).`, name);
    }
  });
});

describe('the daemon', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(() => s.close());

  it('answers a BMP bomb 413 LIMIT_EXCEEDED with the same message, at once', async () => {
    const f = new FormData();
    f.append('file', new File([new Uint8Array(bmpBomb(50000, 50000))], 'scan.bmp'));
    f.append('settings', JSON.stringify({ width: 100 }));
    const t0 = Date.now();
    const res = await fetch(`${s.url}/api/v1/tools/image/resize`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.token}` },
      body: f,
    });
    const j = (await res.json()) as { error?: { code: string; message: string } };
    assert.equal(res.status, 413, JSON.stringify(j));
    assert.equal(j.error?.code, 'LIMIT_EXCEEDED');
    assert.equal(
      j.error?.message,
      'The image scan.bmp is 50000×50000 pixels (2500 MP), more than the limit of 100000000 (KILN_MAX_PIXELS).',
    );
    assert.ok(Date.now() - t0 < 5000, `took ${Date.now() - t0} ms`);
  });
});
