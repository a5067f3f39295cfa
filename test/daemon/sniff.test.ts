/**
 * Inputs are checked from their bytes before a job is queued: a non-image named .jpg sent to an image
 * tool, a preset, a pipeline or a batch is answered 415 UNSUPPORTED_INPUT at once, even when the answer would be a
 * 202 (a zero synchronous window, or Prefer: respond-async), and no job is recorded for it.
 */
import assert from 'node:assert/strict';
import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { filePart, form, startServer, type TestServer } from '../helpers/server.js';

const dir = tempDir();

describe('input kinds checked before queueing', () => {
  let s: TestServer;
  let fake: string;
  let real: string;
  before(async () => {
    s = await startServer({ env: { SYNC_WAIT_MS: '0' } });
    fake = path.join(dir, 'holiday.jpg');
    await writeFile(fake, 'Dear all, the photos follow in the next mail.\n'.repeat(20));
    real = await makeImage(dir, 'real.jpg', 64, 48);
  });
  after(() => s.close());

  async function run(route: string, fields: Record<string, string | Blob | Blob[]>, headers: Record<string, string> = {}) {
    const res = await fetch(s.url + route, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.token}`, ...headers },
      body: await form(fields),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, json: res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text };
  }

  async function jobCount(): Promise<number> {
    const list = await (await fetch(`${s.url}/api/v1/jobs`, { headers: { authorization: `Bearer ${s.token}` } })).json();
    return (list as { jobs: unknown[] }).jobs.length;
  }

  it('refuses a text file named .jpg with 415 instead of a 202 (tool, preset, Prefer: respond-async)', async () => {
    const before = await jobCount();
    const tool = await run('/api/v1/tools/image/resize', { file: await filePart(fake), settings: '{"width": 20}' });
    assert.equal(tool.status, 415, JSON.stringify(tool.json));
    assert.equal(tool.json.error.code, 'UNSUPPORTED_INPUT');
    assert.match(tool.json.error.message, /holiday\.jpg/);
    const preset = await run('/api/v1/tools/image/jpg-to-png', { file: await filePart(fake) }, { prefer: 'respond-async' });
    assert.equal(preset.status, 415, JSON.stringify(preset.json));
    assert.equal(preset.json.error.code, 'UNSUPPORTED_INPUT');
    const pipeline = await run('/api/v1/pipelines/run', {
      file: await filePart(fake),
      pipeline: JSON.stringify({
        steps: [
          { tool: 'resize', settings: { width: 20 } },
          { tool: 'rotate', settings: { angle: 90 } },
        ],
      }),
    });
    assert.equal(pipeline.status, 415, JSON.stringify(pipeline.json));
    assert.equal(await jobCount(), before, 'no job was recorded for a refused input');
    assert.deepEqual(await readdir(path.join(s.dataDir, 'jobs')).catch(() => []), [], 'no job directory is left behind');
    // A real image still goes the asynchronous way.
    const ok = await run('/api/v1/tools/image/resize', { file: await filePart(real), settings: '{"width": 20}' });
    assert.equal(ok.status, 202, JSON.stringify(ok.json));
  });

  it('refuses a batch whose every input is of the wrong kind before any job, and runs the rest otherwise', async () => {
    const before = await jobCount();
    const other = path.join(dir, 'notes.png');
    await writeFile(other, 'plain words, not a picture\n'.repeat(10));
    const none = await run('/api/v1/tools/image/resize/batch', {
      files: [await filePart(fake), await filePart(other)],
      settings: '{"width": 20}',
    });
    assert.equal(none.status, 415, String(none.json));
    assert.equal(none.json.error.code, 'UNSUPPORTED_INPUT');
    assert.equal(none.json.error.details.length, 2);
    assert.equal(await jobCount(), before);
    const one = await run('/api/v1/tools/image/resize/batch', { files: await filePart(fake), settings: '{"width": 20}' });
    assert.equal(one.status, 415);
    assert.match(one.json.error.message, /holiday\.jpg/);
    assert.equal(await jobCount(), before);

    const mixed = await run('/api/v1/tools/image/resize/batch', {
      files: [await filePart(fake), await filePart(real)],
      settings: '{"width": 20}',
      clientJobId: 'mixed-batch',
    });
    assert.equal(mixed.status, 200);
    assert.deepEqual(
      ['x-batch-total', 'x-batch-succeeded', 'x-batch-failed'].map((h) => mixed.headers.get(h)),
      ['2', '1', '1'],
    );
    const found = await (
      await fetch(`${s.url}/api/v1/jobs?clientJobId=mixed-batch`, { headers: { authorization: `Bearer ${s.token}` } })
    ).json();
    assert.deepEqual(
      found.jobs.map((j: { jobId: string; status: string }) => [j.jobId, j.status]),
      [[mixed.headers.get('x-job-id'), 'completed']],
    );
  });
});
