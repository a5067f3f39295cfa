/**
 * Multipart field handling that a hostile client controls: indexed file fields (sig0, sig1…) take only
 * small indices, so a field such as sig200000000 is refused at once instead of building a sparse array
 * of that length and freezing every other request.
 */
import assert from 'node:assert/strict';
import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PDFDocument } from '@cantoo/pdf-lib';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { filePart, form, startServer, type TestServer } from '../helpers/server.js';

describe('indexed upload fields', () => {
  let s: TestServer;
  let pdf: string;
  let sig: string;
  const dir = tempDir('kiln-uploads-');
  before(async () => {
    s = await startServer();
    const doc = await PDFDocument.create();
    doc.addPage([400, 300]);
    pdf = path.join(dir, 'doc.pdf');
    await writeFile(pdf, await doc.save());
    sig = await makeImage(dir, 'sig.png', 60, 20);
  });
  after(() => s.close());

  const post = async (fields: Record<string, string | Blob>) =>
    fetch(`${s.url}/api/v1/tools/pdf/sign-pdf`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.token}` },
      body: await form(fields),
    });

  it('refuses a huge index at once while other requests stay fast', async () => {
    const started = Date.now();
    const huge = post({
      file: await filePart(pdf),
      sig200000000: await filePart(sig),
      placements: '[{"sig":0,"page":0,"x":0.1,"y":0.1,"w":0.2,"h":0.1}]',
    });
    const healthStarted = Date.now();
    const health = await fetch(`${s.url}/api/v1/health`);
    const healthMs = Date.now() - healthStarted;
    const res = await huge;
    assert.equal(res.status, 400);
    assert.equal((await res.json()).error.code, 'VALIDATION_ERROR');
    assert.equal(health.status, 200);
    assert.ok(healthMs < 500, `health answered in ${healthMs} ms`);
    assert.ok(Date.now() - started < 3000);
    const above = await post({ file: await filePart(pdf), sig100: await filePart(sig), placements: '[]' });
    assert.equal(above.status, 400);
    assert.match((await above.json()).error.message, /sig0 to sig99/);
    const dup = await post({ file: await filePart(pdf), sig0: await filePart(sig), placements: '[]' });
    assert.notEqual(dup.status, 500);
  });

  it('refuses a batch of more than 500 files naming the limit, and keeps no job', async () => {
    const png = await filePart(await makeImage(dir, 'tiny.png', 2, 2, { format: 'png' }));
    const jobs = () => readdir(path.join(s.dataDir, 'jobs')).catch(() => []);
    const before = await jobs();
    const res = await fetch(`${s.url}/api/v1/tools/image/png-to-jpg/batch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.token}` },
      body: await form({ files: Array.from({ length: 501 }, () => png) }),
    });
    assert.equal(res.status, 413);
    const body = (await res.json()) as { error: { code: string; message: string; details: unknown } };
    // It used to be busboy's own words: "Too many parts in the upload: reach files limit".
    assert.equal(body.error.code, 'LIMIT_EXCEEDED');
    assert.match(body.error.message, /^Too many files: at most 500 in one request/);
    assert.deepEqual(body.error.details, { limit: 500 });
    assert.deepEqual(await jobs(), before);
  });

  it('keeps the order of the indices it takes (sig0 and sig3 are the first and second signature)', async () => {
    const res = await post({
      file: await filePart(pdf),
      sig3: await filePart(sig),
      sig0: await filePart(sig),
      placements: '[{"sig":1,"page":0,"x":0.1,"y":0.1,"w":0.2,"h":0.1}]',
    });
    assert.equal(res.status, 200, await res.text());
  });
});
