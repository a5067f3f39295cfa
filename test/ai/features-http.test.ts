/**
 * Feature bundles on the daemon with the real background-removal bundle (from the npm registry once,
 * then from the shared cache): queued install that survives a restart mid-download, no second
 * download, remove, air-gapped import of an exported archive, audit events, admin-only access.
 */
import assert from 'node:assert/strict';
import { createReadStream, existsSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { readdir, readFile, stat, truncate } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import backgroundRemoval from '../../src/ai/bundles/background-removal.js';
import { exportBundle } from '../../src/ai/install/archive.js';
import { fetchTarball } from '../../src/ai/install/npm.js';
import { stagingDir } from '../../src/ai/paths.js';
import onnxruntime from '../../src/ai/runtimes/onnxruntime.js';
import type { NpmPin } from '../../src/ai/runtimes/manifest.js';
import { tempDir } from '../helpers/fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

const SHARED_CACHE = process.env.KILN_AI_CACHE_DIR!;

async function api(s: TestServer, method: string, url: string, body?: FormData) {
  const res = await fetch(s.url + url, { method, headers: { authorization: `Bearer ${s.token}` }, body });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 600_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('feature bundles over HTTP', () => {
  let registry: Server;
  let slow = true;
  const tarballs = new Map<string, string>();
  let s: TestServer;
  let dataDir: string;

  before(async () => {
    // The real tarballs, verified into the shared cache (downloaded once per machine).
    const pins: NpmPin[] = [...onnxruntime.packages, (backgroundRemoval.files[0]!.source as { tarball: NpmPin }).tarball];
    for (const p of pins) tarballs.set(`/${p.name}/-/${p.name.split('/').pop()}-${p.version}.tgz`, await fetchTarball(p, SHARED_CACHE));
    // A registry that serves them slowly until told otherwise, so a restart lands mid-download.
    registry = createServer((req, res) => {
      const file = tarballs.get(decodeURIComponent(req.url!));
      if (!file) return res.writeHead(404).end();
      void stat(file).then((st) => {
        res.writeHead(200, { 'content-length': st.size });
        const stream = createReadStream(file, { highWaterMark: 256 * 1024 });
        stream.on('data', (chunk) => {
          if (!slow) return;
          stream.pause();
          setTimeout(() => stream.resume(), 100);
          void chunk;
        });
        stream.pipe(res);
        res.on('close', () => stream.destroy());
      });
    });
    await new Promise<void>((r) => registry.listen(0, '127.0.0.1', r));
    process.env.KILN_NPM_REGISTRY = `http://127.0.0.1:${(registry.address() as AddressInfo).port}/`;
    dataDir = tempDir('kiln-features-');
    // This data dir's own cache: the daemon must download through the registry above.
    process.env.KILN_AI_CACHE_DIR = path.join(dataDir, 'cache');
    s = await startServer({ dataDir });
  });
  after(async () => {
    process.env.KILN_AI_CACHE_DIR = SHARED_CACHE;
    delete process.env.KILN_NPM_REGISTRY;
    await s?.close();
    registry.closeAllConnections();
    await new Promise((r) => registry.close(r));
  });

  it('queues an install, survives a restart mid-download, installs, and never downloads twice', async () => {
    const list = await api(s, 'GET', '/api/v1/admin/features');
    assert.equal(list.status, 200);
    const bg = list.json.features.find((f: { id: string }) => f.id === 'background-removal');
    assert.equal(bg.state, 'missing');
    assert.equal(bg.licence, 'MIT');
    assert.ok(bg.tools.includes('remove-background'));
    assert.equal(list.json.features.length, 7);

    const q = await api(s, 'POST', '/api/v1/admin/features/background-removal/install');
    assert.equal(q.status, 202);
    assert.deepEqual(q.json.queued, ['background-removal']);
    const progress = await until('bytes to arrive', async () => {
      const f = (await api(s, 'GET', '/api/v1/admin/features/background-removal')).json;
      return f.state === 'installing' && f.progress.bytesDone > 0 ? f.progress : undefined;
    });
    assert.ok(progress.bytesTotal > 200e6);

    const cutOff = await readdir(stagingDir(dataDir));
    assert.ok(cutOff.length > 0);
    s = await s.restart();
    // Nothing half-installed after the restart: the cut-off staging is gone, no bundle is visible,
    // and the install is queued again.
    const now = await readdir(stagingDir(dataDir));
    assert.ok(
      cutOff.every((d) => !now.includes(d)),
      `${cutOff} / ${now}`,
    );
    assert.equal(existsSync(path.join(dataDir, 'ai', 'bundles', 'background-removal')), false);
    assert.ok(['queued', 'installing'].includes((await api(s, 'GET', '/api/v1/admin/features/background-removal')).json.state));
    slow = false;
    const done = await until('the install to finish', async () => {
      const f = (await api(s, 'GET', '/api/v1/admin/features/background-removal')).json;
      assert.notEqual(f.state, 'failed', JSON.stringify(f.error));
      return f.state === 'installed' ? f : undefined;
    });
    assert.equal(done.installed.via, 'download');
    assert.equal(done.installed.bytes, 88188479 + 44342436);
    assert.deepEqual(await readdir(stagingDir(dataDir)), []);

    const again = await api(s, 'POST', '/api/v1/admin/features/background-removal/install');
    assert.equal(again.status, 202);
    assert.deepEqual(again.json, { ...again.json, queued: [], installed: ['background-removal'] });

    const audit = await api(s, 'GET', '/api/v1/admin/audit');
    const events = audit.json.events.map((e: { event: string }) => e.event);
    assert.ok(events.includes('feature.installed'), events.join(', '));
  });

  it('removes a bundle, and installs it again from an exported archive without network', async () => {
    const archive = path.join(tempDir('kiln-export-'), 'bg.tar');
    await exportBundle(dataDir, backgroundRemoval, archive);
    assert.equal((await api(s, 'DELETE', '/api/v1/admin/features/background-removal')).status, 204);
    assert.equal((await api(s, 'GET', '/api/v1/admin/features/background-removal')).json.state, 'missing');
    assert.equal((await api(s, 'DELETE', '/api/v1/admin/features/background-removal')).status, 404);

    await new Promise((r) => registry.close(r));
    registry.closeAllConnections();
    const fd = new FormData();
    fd.append('archive', await (await import('node:fs')).openAsBlob(archive), 'bg.tar');
    const imported = await api(s, 'POST', '/api/v1/admin/features/import', fd);
    assert.equal(imported.status, 201, JSON.stringify(imported.json));
    assert.equal(imported.json.state, 'installed');
    assert.equal(imported.json.installed.via, 'import');
    const events = (await api(s, 'GET', '/api/v1/admin/audit')).json.events.map((e: { event: string }) => e.event);
    assert.ok(events.includes('feature.remove') && events.includes('feature.import'), events.join(', '));
  });

  // A model file cut short on disk (a disk full, a cleaner) was still listed 'installed', the daemon's
  // install answered "already installed" and queued nothing, and every run failed.
  it('a model file cut short on disk: listed damaged, the tool names the bundle and the reinstall, an install replaces it', async () => {
    const model = path.join(dataDir, 'ai', 'bundles', 'background-removal', 'isnet-fp16.onnx');
    await truncate(model, 1_000_000);
    const f = (await api(s, 'GET', '/api/v1/admin/features/background-removal')).json;
    assert.equal(f.state, 'damaged');
    assert.deepEqual(f.damaged, [{ name: 'isnet-fp16.onnx', size: 88188479, found: 1_000_000 }]);
    assert.equal(f.error.reason, 'damaged');
    assert.match(f.error.message, /isnet-fp16\.onnx is 1000000 bytes, 88188479 installed.*kiln features install background-removal/);

    const photo = path.join(tempDir('kiln-damaged-'), 'photo.png');
    await sharp({ create: { width: 64, height: 48, channels: 3, background: '#3a6' } })
      .png()
      .toFile(photo);
    const fd = new FormData();
    fd.append('file', await (await import('node:fs')).openAsBlob(photo), 'photo.png');
    const run = await api(s, 'POST', '/api/v1/tools/image/remove-background', fd);
    assert.equal(run.status, 409, JSON.stringify(run.json));
    assert.equal(run.json.error.code, 'FEATURE_INCOMPATIBLE');
    assert.equal(run.json.error.reason, 'model-load');
    assert.match(
      run.json.error.message,
      /isnet-fp16\.onnx \(background-removal bundle\) is damaged on disk: isnet-fp16\.onnx is 1000000 bytes/,
    );
    assert.match(run.json.error.message, /kiln features install background-removal/);

    const q = await api(s, 'POST', '/api/v1/admin/features/background-removal/install');
    assert.equal(q.status, 202);
    assert.deepEqual(q.json.queued, ['background-removal']);
    await until('the reinstall', async () => {
      const st = (await api(s, 'GET', '/api/v1/admin/features/background-removal')).json;
      assert.notEqual(st.state, 'failed', JSON.stringify(st.error));
      return st.state === 'installed' ? st : undefined;
    });
    const bytes = await readFile(model);
    assert.equal(createHash('sha256').update(bytes).digest('hex'), backgroundRemoval.files[0]!.sha256);
  });

  it('answers 404 for an unknown bundle and 400 without an archive', async () => {
    assert.equal((await api(s, 'GET', '/api/v1/admin/features/nope')).status, 404);
    assert.equal((await api(s, 'POST', '/api/v1/admin/features/nope/install')).status, 404);
    assert.equal((await api(s, 'POST', '/api/v1/admin/features/import', new FormData())).status, 400);
  });
});
