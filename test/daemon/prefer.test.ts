/**
 * Async on request (RFC 7240): `Prefer: respond-async` answers 202 at once with a Location and the
 * job's status and events URLs; `Prefer: wait=N` waits longer than the server's window; the CLI's
 * --async prints the job id and exits.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { preferenceApplied, preferredWait } from '../../daemon/jobs/answer.js';
import { kiln } from '../helpers/cli.js';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { api, filePart, form, startServer, type TestServer } from '../helpers/server.js';
import { readZip } from '../helpers/zip.js';

describe('Prefer header grammar (RFC 7240)', () => {
  it('reads quoted values and ignores parameters; the server window stands when nothing applies', () => {
    for (const h of ['wait=5', 'wait="5"', 'wait=5; foo=bar', 'Wait = 5', 'handling=lenient, wait="5";x']) {
      assert.deepEqual(preferredWait(h, 10_000), { waitMs: 5000, applied: 'wait=5' }, h);
    }
    assert.deepEqual(preferredWait('respond-async; x=1', 10_000), { waitMs: 0, applied: 'respond-async' });
    assert.deepEqual(preferredWait(['return=minimal', 'wait=2'], 10_000), { waitMs: 2000, applied: 'wait=2' });
    for (const h of [undefined, 'wait=', 'wait=abc', 'wait="5', 'nowait=5'])
      assert.deepEqual(preferredWait(h, 10_000), { waitMs: 10_000 }, String(h));
    // RFC 7240 §4.3's own example: asynchronous only if the run takes longer than 10 s.
    for (const h of ['respond-async, wait=10', 'wait=10, respond-async', ['respond-async', 'wait="10"']])
      assert.deepEqual(preferredWait(h, 0), { waitMs: 10_000, applied: 'respond-async, wait=10' }, String(h));
  });

  it('names respond-async as applied only on a 202', () => {
    assert.deepEqual(preferenceApplied('respond-async, wait=10', 202), { 'preference-applied': 'respond-async, wait=10' });
    assert.deepEqual(preferenceApplied('respond-async, wait=10', 200), { 'preference-applied': 'wait=10' });
    assert.deepEqual(preferenceApplied('respond-async', 200), {});
    assert.deepEqual(preferenceApplied(undefined, 202), {});
  });
});

describe('Prefer: respond-async and wait=N', () => {
  let s: TestServer;
  const dir = tempDir('kiln-prefer-');
  before(async () => {
    // No synchronous window at all: only a client's wait=N makes a run answer 200.
    s = await startServer({ env: { SYNC_WAIT_MS: '0' } });
  });
  after(() => s.close());

  it('waiting on a job whose record is gone (its owner deleted) fails NOT_FOUND, never "still going"', async () => {
    const png = await makeImage(dir, 'gone.png', 20, 20, { format: 'png' });
    const res = await run('/api/v1/tools/image/resize', 'wait=30', { file: await filePart(png), settings: '{"width": 10}' });
    assert.equal(res.status, 200);
    const { jobId } = (await res.json()) as { jobId: string };
    await s.app.kiln.store.db.deleteFrom('jobs').where('id', '=', jobId).execute();
    // An MCP call waits in a loop of wait(id, 60 s): an undefined at once made it spin on the database.
    await assert.rejects(s.app.kiln.jobs.wait(jobId, 1000), { code: 'NOT_FOUND' });
  });

  const run = async (route: string, prefer: string | undefined, fields: Record<string, string | Blob>) =>
    fetch(`${s.url}${route}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.token}`, ...(prefer ? { prefer } : {}) },
      body: await form(fields),
    });

  it('respond-async: 202 at once with Location, statusUrl and eventsUrl that work', async () => {
    const img = await makeImage(dir, 'a.png', 100, 50);
    const res = await run('/api/v1/tools/image/resize', 'respond-async', { file: await filePart(img), settings: '{"width": 10}' });
    assert.equal(res.status, 202);
    assert.equal(res.headers.get('preference-applied'), 'respond-async');
    const body = await res.json();
    assert.equal(res.headers.get('location'), `/api/v1/jobs/${body.jobId}`);
    assert.equal(body.statusUrl, `/api/v1/jobs/${body.jobId}`);
    assert.equal(body.eventsUrl, `/api/v1/jobs/${body.jobId}/progress`);
    let job: any;
    for (let i = 0; i < 100; i++) {
      job = (await api(s, s.token, 'GET', res.headers.get('location')!)).body;
      if (job.status === 'completed') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(job.status, 'completed');
  });

  it('wait=N waits for the result beyond the server window; pipelines honour it too', async () => {
    const img = await makeImage(dir, 'b.png', 100, 50);
    const res = await run('/api/v1/tools/image/resize', 'wait=30', { file: await filePart(img), settings: '{"width": 10}' });
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(res.headers.get('preference-applied'), 'wait=30');
    const done = await res.json();
    const out = await fetch(`${s.url}${done.downloadUrl}`, { headers: { authorization: `Bearer ${s.token}` } });
    assert.equal((await sharp(Buffer.from(await out.arrayBuffer())).metadata()).width, 10);
    const pipeline = JSON.stringify({ steps: [{ tool: 'resize', settings: { width: 20 } }] });
    const p = await run('/api/v1/pipelines/run', 'respond-async', { file: await filePart(img), pipeline });
    assert.equal(p.status, 202);
    assert.ok(p.headers.get('location'));
  });

  it('respond-async, wait=N: 200 when the run ends within N s, 202 once N s have passed', async () => {
    const img = await makeImage(dir, 'rw.png', 100, 50);
    const quick = await run('/api/v1/tools/image/resize', 'respond-async, wait=30', {
      file: await filePart(img),
      settings: '{"width": 10}',
    });
    assert.equal(quick.status, 200, await quick.clone().text());
    assert.equal(quick.headers.get('preference-applied'), 'wait=30');
    // Every slot held: the run cannot start, so the answer is the 202 after the wait, not at once.
    const frees: (() => void)[] = [];
    const blockers = Array.from({ length: s.config.jobConcurrency }, (_, i) =>
      s.app.kiln.jobs.queue.run(`prefer-blocker-${i}`, () => new Promise<void>((r) => frees.push(r))),
    );
    try {
      const t0 = Date.now();
      const slow = await run('/api/v1/tools/image/resize', 'respond-async, wait=1', {
        file: await filePart(img),
        settings: '{"width": 10}',
      });
      assert.equal(slow.status, 202);
      assert.ok(Date.now() - t0 >= 900, `answered after ${Date.now() - t0} ms`);
      assert.equal(slow.headers.get('preference-applied'), 'respond-async, wait=1');
    } finally {
      for (const f of frees) f();
      await Promise.all(blockers);
    }
  });

  it('respond-async on a batch: 202 at once, the job counts its outcome and its archive downloads later', async () => {
    const a = await makeImage(dir, 'c.png', 90, 40);
    const b = await makeImage(dir, 'd.jpg', 60, 60);
    const fd = new FormData();
    fd.append('files', await filePart(a));
    fd.append('files', await filePart(b));
    fd.append('files', new File([Buffer.from('no picture here, just words\n'.repeat(5))], 'e.png'));
    fd.append('settings', '{"width": 12}');
    const res = await fetch(`${s.url}/api/v1/tools/image/resize/batch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.token}`, prefer: 'respond-async' },
      body: fd,
    });
    assert.equal(res.status, 202, await res.clone().text());
    assert.equal(res.headers.get('preference-applied'), 'respond-async');
    const { jobId } = await res.json();
    assert.equal(res.headers.get('location'), `/api/v1/jobs/${jobId}`);
    let job: any;
    for (let i = 0; i < 200; i++) {
      job = (await api(s, s.token, 'GET', `/api/v1/jobs/${jobId}`)).body;
      if (job.status !== 'running') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(job.status, 'completed', JSON.stringify(job));
    assert.deepEqual(job.result.data, { total: 3, succeeded: 2, failed: 1 });
    assert.equal(job.result.downloadUrl, `/api/v1/download/${jobId}/resize-batch.zip`);
    const zip = await fetch(`${s.url}${job.result.downloadUrl}`, { headers: { authorization: `Bearer ${s.token}` } });
    assert.equal(zip.status, 200);
    const entries = await readZip(Buffer.from(await zip.arrayBuffer()));
    assert.deepEqual([...entries.keys()], ['c.png', 'd.jpg', 'manifest.json']);
    assert.equal((await sharp(entries.get('d.jpg')!).metadata()).width, 12);
    assert.equal(JSON.parse(entries.get('manifest.json')!.toString()).items[2].error.code, 'UNSUPPORTED_INPUT');
  });

  it('kiln <tool> --server --async prints the job id and exits; the job downloads later', async () => {
    const key = (await api(s, s.token, 'POST', '/api/v1/api-keys', { name: 'cli' })).body.key as string;
    const img = await makeImage(dir, 'c.png', 80, 40);
    const r = await kiln(['resize', img, '--width', '20', '--server', s.url, '--async'], { env: { KILN_API_KEY: key } });
    assert.equal(r.code, 0, r.stderr);
    const jobId = r.stdout.trim();
    assert.match(jobId, /^[0-9a-f]{24}$/);
    await kiln(['jobs', 'watch', jobId, '--server', s.url, '-q'], { env: { KILN_API_KEY: key } });
    const out = path.join(dir, 'later.png');
    const d = await kiln(['jobs', 'download', jobId, '-o', out, '--server', s.url], { env: { KILN_API_KEY: key } });
    assert.equal(d.code, 0, d.stderr);
    assert.equal((await sharp(out).metadata()).width, 20);
    const local = await kiln(['resize', img, '--width', '20', '--async', '--local']);
    assert.equal(local.code, 2);
  });
});
