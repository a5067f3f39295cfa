/**
 * The OCR runtime and tools over HTTP: the air-gapped import (multipart index + archive), the
 * feature status with its generation, refusals before queueing (Korean with fast, a runtime tier
 * without the runtime, more than 50 pages) and a balanced run returning text with provenance.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { tempDir } from '../helpers/fixtures.js';
import { testKey, testRelease, renderText } from '../helpers/ocr.js';
import { api, filePart, form, startServer, type TestServer } from '../helpers/server.js';

describe('OCR over HTTP', { timeout: 300_000 }, () => {
  const dir = tempDir('kiln-ocr-http-');
  let s: TestServer;
  let image: string;

  before(async () => {
    const pub = path.join(dir, 'test-key.pub.pem');
    await writeFile(pub, testKey().publicKey.export({ format: 'pem', type: 'spki' }).toString());
    process.env.KILN_OCR_TRUSTED_KEYS = pub;
    image = await renderText(path.join(dir, 'line.png'), 700, 100, [{ text: 'Kilns fire clay into stone', x: 20, y: 60, size: 34 }]);
    s = await startServer({ dataDir: path.join(dir, 'data') });
  });
  after(async () => {
    delete process.env.KILN_OCR_TRUSTED_KEYS;
    await s?.close();
  });

  const ocr = async (settings: Record<string, unknown>) =>
    api(s, s.token, 'POST', '/api/v1/tools/image/ocr', await form({ file: await filePart(image), settings: JSON.stringify(settings) }));

  it('refuses before queueing: Korean with fast, a runtime tier without the runtime', async () => {
    const ko = await ocr({ quality: 'fast', language: 'ko' });
    assert.equal(ko.status, 409);
    assert.equal(ko.body.error.code, 'FEATURE_INCOMPATIBLE');
    assert.equal(ko.body.error.reason, 'fast-korean-unsupported');
    const bal = await ocr({ quality: 'balanced' });
    assert.equal(bal.status, 409);
    assert.equal(bal.body.error.code, 'FEATURE_NOT_INSTALLED');
    const st = await api(s, s.token, 'GET', '/api/v1/admin/features/ocr');
    assert.equal(st.body.state, 'missing');
  });

  it('imports a signed release from index + archive and runs balanced on it', async () => {
    const rel = await testRelease();
    const imp = await api(
      s,
      s.token,
      'POST',
      '/api/v1/admin/features/import',
      await form({ index: await filePart(rel.indexFile), archive: await filePart(rel.archiveFile) }),
    );
    assert.equal(imp.status, 201, imp.text);
    assert.equal(imp.body.state, 'installed');
    assert.match(imp.body.generation.id, /^0\.0\.1-test-/);
    // A loaded machine may need longer than the default window: wait up to two minutes.
    const res = await fetch(`${s.url}/api/v1/tools/image/ocr`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.token}`, prefer: 'wait=120' },
      body: await form({ file: await filePart(image), settings: JSON.stringify({ quality: 'balanced' }) }),
    });
    const body = (await res.json()) as { downloadUrl: string };
    assert.equal(res.status, 200, JSON.stringify(body));
    const out = await (await fetch(s.url + body.downloadUrl, { headers: { authorization: `Bearer ${s.token}` } })).json();
    assert.equal(out.text, 'Kilns fire clay into stone');
    assert.equal(out.provenance.actualQuality, 'balanced');
    assert.equal(out.provenance.runtimeGeneration, imp.body.generation.id);
  });

  it('refuses a tampered index on import and keeps the generation', async () => {
    const rel = await testRelease();
    const bad = path.join(dir, 'ocr-runtime-index.json');
    await writeFile(bad, JSON.stringify({ ...rel.index, release: '9.9.9' }));
    const imp = await api(
      s,
      s.token,
      'POST',
      '/api/v1/admin/features/import',
      await form({ index: await filePart(bad), archive: await filePart(rel.archiveFile) }),
    );
    assert.ok(imp.status >= 400, imp.text);
    assert.equal(imp.body.error.reason, 'bad-signature');
    const st = await api(s, s.token, 'GET', '/api/v1/admin/features/ocr');
    assert.equal(st.body.state, 'installed');
    assert.match(st.body.generation.id, /^0\.0\.1-test-/);
  });

  it('installs the shipped release in the background (assembled from the npm tarballs) and switches to it', async () => {
    const before = (await api(s, s.token, 'GET', '/api/v1/admin/features/ocr')).body.generation.id as string;
    const r = await api(s, s.token, 'POST', '/api/v1/admin/features/ocr/install');
    assert.equal(r.status, 202, r.text);
    assert.deepEqual(r.body.queued, ['ocr']);
    const end = Date.now() + 240_000;
    let st: { state: string; generation?: { id: string; all: { id: string }[] }; error?: { message: string } };
    for (;;) {
      st = (await api(s, s.token, 'GET', '/api/v1/admin/features/ocr')).body;
      if (st.state !== 'installing' && st.generation?.id !== before) break;
      if (st.state === 'failed' || Date.now() > end) assert.fail(JSON.stringify(st));
      await new Promise((res) => setTimeout(res, 500));
    }
    assert.equal(st.state, 'installed', JSON.stringify(st));
    assert.match(st.generation!.id, /^2026\.11\.0-/);
    // The test generation was not leased: collected after the switch.
    assert.deepEqual(
      st.generation!.all.map((g) => g.id),
      [st.generation!.id],
    );
  });
});
