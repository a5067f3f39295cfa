import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { getTool } from '../../../src/tools/index.js';
import { runTool } from '../../../src/tools/run-tool.js';
import { createWorkspace } from '../../../src/core/workspace.js';
import type { KilnError } from '../../../src/core/errors.js';
import { keepChromiumWarm, shutdownChromium } from '../../../src/engines/chromium.js';
import { isPrivateAddress } from '../../../src/tools/image/utilities/html-to-image.js';
import { tempDir } from '../../helpers/fixtures.js';
import { kiln } from '../../helpers/cli.js';

const dir = tempDir();
keepChromiumWarm();
after(() => shutdownChromium());

async function shot(settings: Record<string, unknown>) {
  const ws = await createWorkspace();
  try {
    const out = await runTool(getTool('html-to-image'), { files: [], extra: {} }, settings, { workDir: ws.dir, dataDir: dir });
    const buf = await sharp(out.output!.path).toBuffer();
    return { name: out.output!.name, buf, meta: await sharp(buf).metadata() };
  } finally {
    await ws.dispose();
  }
}

async function pixel(buf: Buffer, x: number, y: number): Promise<number[]> {
  const { data } = await sharp(buf)
    .extract({ left: x, top: y, width: 1, height: 1 })
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return [...data];
}

const near = (a: number[], b: number[]) => a.every((v, i) => Math.abs(v - b[i]!) <= 12);

describe('html-to-image', () => {
  let server: Server;
  let port = 0;
  let embedPort = 0;
  const hits: string[] = [];
  const saved = process.env.KILN_URL_ALLOWLIST;
  before(async () => {
    server = createServer((req, res) => {
      hits.push(req.url ?? '');
      if (req.url === '/to-v6-loopback') {
        res.writeHead(302, { location: `http://[::1]:${port}/page` });
        return res.end();
      }
      if (req.url === '/to-page') {
        res.writeHead(301, { location: '/page' });
        return res.end();
      }
      if (req.url?.startsWith('/embed')) {
        res.setHeader('content-type', 'text/html');
        const o = `http://127.0.0.2:${embedPort}`;
        return res.end(
          `<html><body><img src="${o}/img.png"><iframe src="${o}/frame"></iframe><script>fetch("${o}/fetch").catch(()=>{})</script></body></html>`,
        );
      }
      if (req.url === '/tall') {
        res.setHeader('content-type', 'text/html');
        return res.end('<html><body style="margin:0"><div style="height:2000px;background:#0000ff"></div></body></html>');
      }
      res.setHeader('content-type', 'text/html');
      res.end(
        '<!DOCTYPE html><html><head><style>body{margin:0;background:#ffffff} #box{position:absolute;left:0;top:0;width:200px;height:150px;background:rgb(255,0,0)}</style></head>' +
          '<body><div id="box"></div><div style="position:absolute;left:300px;top:0;width:100px;height:100px;background:rgb(0,160,0)"></div></body></html>',
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  after(() => {
    if (saved === undefined) delete process.env.KILN_URL_ALLOWLIST;
    else process.env.KILN_URL_ALLOWLIST = saved;
    return new Promise<void>((r) => server.close(() => r()));
  });

  it('classifies private addresses, including IPv4 inside IPv6', () => {
    for (const a of [
      '127.0.0.1',
      '10.2.3.4',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '64:ff9b::a00:1',
      '2002:7f00:1::1',
      '::7f00:1',
      '::127.0.0.1',
      '::a00:1',
      '64:ff9b:1::a00:1',
      '64:ff9b:1:ffff::1',
      '64:ff9b:0:0:0:0:7f00:1',
      '0:0:0:0:0:ffff:7f00:1',
      '::FFFF:127.0.0.1',
    ]) {
      assert.equal(isPrivateAddress(a), true, a);
    }
    for (const a of ['93.184.216.34', '8.8.8.8', '2606:4700::1111', '64:ff9b::808:808', '::ffff:8.8.8.8', '2002:808:808::1'])
      assert.equal(isPrivateAddress(a), false, a);
  });

  it('refuses loopback URLs without the allow-list, whatever their spelling', async () => {
    delete process.env.KILN_URL_ALLOWLIST;
    hits.length = 0;
    for (const url of [
      `http://127.0.0.1:${port}/`,
      `http://localhost:${port}/`,
      `http://2130706433:${port}/`,
      `http://[::ffff:127.0.0.1]:${port}/`,
      `http://0x7f.1:${port}/`,
    ]) {
      await assert.rejects(shot({ url }), (e: KilnError) => e.code === 'VALIDATION_ERROR' && e.reason === 'url-not-allowed', url);
    }
    await assert.rejects(shot({ url: 'file:///etc/passwd' }), (e: KilnError) => e.code === 'VALIDATION_ERROR');
    assert.deepEqual(hits, [], 'nothing reached the server');
  });

  it('renders a local page when the allow-list names 127.0.0.1 (pixel check)', async () => {
    process.env.KILN_URL_ALLOWLIST = '127.0.0.1';
    const { meta, buf } = await shot({ url: `http://127.0.0.1:${port}/page` });
    assert.deepEqual([meta.width, meta.height, meta.format], [1280, 720, 'png']);
    assert.ok(near(await pixel(buf, 100, 75), [255, 0, 0]), 'red box');
    assert.ok(near(await pixel(buf, 350, 50), [0, 160, 0]), 'green box');
    assert.ok(near(await pixel(buf, 800, 500), [255, 255, 255]), 'white page');
  });

  it('follows a redirect on an allowed host but refuses one to an address outside the allow-list', async () => {
    process.env.KILN_URL_ALLOWLIST = '127.0.0.1/32';
    const { buf } = await shot({ url: `http://127.0.0.1:${port}/to-page`, format: 'jpg', quality: 80, devicePreset: 'mobile' });
    const meta = await sharp(buf).metadata();
    assert.deepEqual([meta.width, meta.height], [375, 812]);
    // Without a viewport meta tag a mobile browser lays the page out at 980 px and scales it down.
    assert.ok(near(await pixel(buf, 20, 20), [255, 0, 0]));
    await assert.rejects(
      shot({ url: `http://127.0.0.1:${port}/to-v6-loopback` }),
      (e: KilnError) => e.code === 'VALIDATION_ERROR' && e.reason === 'url-not-allowed',
    );
  });

  it('blocks sub-resources on addresses outside the allow-list', async () => {
    // A second server on another loopback address: reachable, but not on the allow-list.
    const seen: string[] = [];
    const other = createServer((req, res) => {
      seen.push(req.url ?? '');
      res.end('x');
    });
    await new Promise<void>((r) => other.listen(0, '127.0.0.2', r));
    const port2 = (other.address() as AddressInfo).port;
    const page = `/embed?p=${port2}`;
    embedPort = port2;
    try {
      process.env.KILN_URL_ALLOWLIST = '127.0.0.1';
      await shot({ url: `http://127.0.0.1:${port}${page}` });
      assert.deepEqual(seen, [], 'no request reached 127.0.0.2');
      assert.ok(hits.includes(page));
      // The same page with both addresses allowed does reach it, so the check above can fail.
      process.env.KILN_URL_ALLOWLIST = '127.0.0.1, 127.0.0.2';
      await shot({ url: `http://127.0.0.1:${port}${page}` });
      assert.ok(seen.length > 0);
    } finally {
      await new Promise<void>((r) => other.close(() => r()));
    }
  });

  it('captures the full page as WebP at a custom size', async () => {
    process.env.KILN_URL_ALLOWLIST = '127.0.0.1';
    const { meta, buf } = await shot({
      url: `http://127.0.0.1:${port}/tall`,
      format: 'webp',
      fullPage: true,
      devicePreset: 'custom',
      viewportWidth: 400,
      viewportHeight: 320,
    });
    assert.equal(meta.format, 'webp');
    assert.deepEqual([meta.width, meta.height], [400, 2000]);
    assert.ok(near(await pixel(buf, 200, 1900), [0, 0, 255]));
  });

  it('works from the CLI: refused without the allow-list, written with it', async () => {
    const out = `${dir}/cli.png`;
    const refused = await kiln(['html-to-image', '--url', `http://127.0.0.1:${port}/page`, '-o', out], { env: { KILN_URL_ALLOWLIST: '' } });
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /private, loopback or link-local/);
    const ok = await kiln(['html-to-image', '--url', `http://127.0.0.1:${port}/page`, '--device-preset', 'tablet', '-o', out], {
      env: { KILN_URL_ALLOWLIST: '127.0.0.1' },
    });
    assert.equal(ok.code, 0, ok.stderr);
    const meta = await sharp(out).metadata();
    assert.deepEqual([meta.width, meta.height], [768, 1024]);
    assert.ok(near(await pixel(await sharp(out).toBuffer(), 100, 75), [255, 0, 0]));
  });

  it('validates settings', async () => {
    await assert.rejects(shot({}), (e: KilnError) => e.code === 'VALIDATION_ERROR');
    await assert.rejects(shot({ url: 'http://127.0.0.1/', viewportWidth: 100 }), (e: KilnError) => e.code === 'VALIDATION_ERROR');
  });
});
