/**
 * Route generation across input kinds: presets (fixed settings, input type checked from the bytes),
 * a JSON-body tool, and cancelling a run while its engine works. These use other families' tools.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { exec } from '../../src/core/process.js';
import { parse } from 'yaml';
import { kiln } from '../helpers/cli.js';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { filePart, form, readSse, startServer, type TestServer } from '../helpers/server.js';

const dir = tempDir();
const auth = (t: string) => ({ authorization: `Bearer ${t}` });

describe('generated tool routes', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(() => s.close());

  it('runs a preset with its fixed settings and rejects inputs it does not take (415)', async () => {
    const jpg = await makeImage(dir, 'p.jpg', 40, 20);
    const fd = await form({ file: await filePart(jpg), settings: JSON.stringify({ quality: 80 }) });
    const res = await fetch(`${s.url}/api/v1/tools/image/jpg-to-png`, { method: 'POST', headers: auth(s.token), body: fd });
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.match(body.downloadUrl, /\/p\.png$/);
    const out = Buffer.from(await (await fetch(s.url + body.downloadUrl, { headers: auth(s.token) })).arrayBuffer());
    assert.equal((await sharp(out).metadata()).format, 'png');
    const job = await (await fetch(`${s.url}/api/v1/jobs/${body.jobId}`, { headers: auth(s.token) })).json();
    assert.deepEqual([job.tool, job.baseTool], ['jpg-to-png', 'convert']);

    const png = await makeImage(dir, 'q.png', 40, 20);
    const wrong = await fetch(`${s.url}/api/v1/tools/image/jpg-to-png`, {
      method: 'POST',
      headers: auth(s.token),
      body: await form({ file: await filePart(png, 'looks-like.jpg') }),
    });
    assert.equal(wrong.status, 415);
    const err = (await wrong.json()).error;
    assert.equal(err.code, 'UNSUPPORTED_INPUT');
    assert.match(err.message, /takes \.jpg, \.jpeg/);

    const zip = await fetch(`${s.url}/api/v1/tools/image/jpg-to-png/batch`, {
      method: 'POST',
      headers: auth(s.token),
      body: await form({ files: [await filePart(jpg)] }),
    });
    assert.equal(zip.status, 200);
    assert.ok(zip.headers.get('x-job-id'));
  });

  it("refuses a setting a preset fixes, as the CLI does, and documents only the preset's own settings", async () => {
    const jpg = await makeImage(dir, 'fixed.jpg', 40, 20);
    const routes = ['/api/v1/tools/image/jpg-to-png', '/api/v1/tools/image/jpg-to-png/batch'];
    const single = await fetch(s.url + routes[0]!, {
      method: 'POST',
      headers: auth(s.token),
      body: await form({ file: await filePart(jpg), settings: JSON.stringify({ format: 'webp' }) }),
    });
    assert.equal(single.status, 400);
    const err = (await single.json()).error;
    assert.equal(err.code, 'VALIDATION_ERROR');
    assert.deepEqual(err.details, [{ path: 'format', message: 'unknown setting' }]);
    // A plain form field is a setting too, and the batch route validates the same way.
    const batch = await fetch(s.url + routes[1]!, {
      method: 'POST',
      headers: auth(s.token),
      body: await form({ files: [await filePart(jpg)], format: 'webp' }),
    });
    assert.equal(batch.status, 400);
    assert.equal((await batch.json()).error.details[0].path, 'format');
    // The CLI gives the same answer for the same preset.
    const cli = await kiln(['jpg-to-png', jpg, '--settings', '{"format":"webp"}', '-o', path.join(dir, 'fixed-out.png')]);
    assert.equal(cli.code, 2, cli.stderr);
    assert.ok(cli.stderr.includes(err.message), `${cli.stderr} / ${err.message}`);

    const doc = parse(await (await fetch(`${s.url}/api/v1/openapi.yaml`)).text());
    const op = doc.paths['/api/v1/tools/image/jpg-to-png'].post;
    const ref: string = op.requestBody.content['multipart/form-data'].schema.properties.settings.$ref;
    const schema = doc.components.schemas[ref.split('/').pop()!];
    assert.ok(schema.properties.quality, 'the preset documents the settings it takes');
    assert.equal(schema.properties.format, undefined, 'the fixed format is not a setting of the preset');
    assert.ok(doc.components.schemas.ConvertSettings.properties.format, 'the base tool still documents it');
    assert.match(op.description, /Output: PNG\./);
  });

  it('takes the settings as a JSON body for a tool without input file', async () => {
    const res = await fetch(`${s.url}/api/v1/tools/image/qr-generate`, {
      method: 'POST',
      headers: { ...auth(s.token), 'content-type': 'application/json' },
      body: JSON.stringify({ data: 'hello kiln', size: 200 }),
    });
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    const png = Buffer.from(await (await fetch(s.url + body.downloadUrl, { headers: auth(s.token) })).arrayBuffer());
    const meta = await sharp(png).metadata();
    assert.deepEqual([meta.format, meta.width], ['png', 200]);
    const bad = await fetch(`${s.url}/api/v1/tools/image/qr-generate`, {
      method: 'POST',
      headers: { ...auth(s.token), 'content-type': 'application/json' },
      body: JSON.stringify({ size: 200 }),
    });
    assert.equal(bad.status, 400);
    assert.equal((await bad.json()).error.details[0].path, 'data');
    const batch = await fetch(`${s.url}/api/v1/tools/image/qr-generate/batch`, {
      method: 'POST',
      headers: auth(s.token),
      body: await form({ settings: '{}' }),
    });
    assert.equal(batch.status, 404);
    assert.match((await batch.json()).error.message, /no batch route/);
  });

  it('runs a multi-file tool from repeated file parts', async () => {
    const a = await makeImage(dir, 's1.png', 30, 20);
    const b = await makeImage(dir, 's2.png', 50, 20);
    const res = await fetch(`${s.url}/api/v1/tools/image/stitch`, {
      method: 'POST',
      headers: auth(s.token),
      body: await form({ file: [await filePart(a), await filePart(b)], direction: 'horizontal' }),
    });
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    const out = Buffer.from(await (await fetch(s.url + body.downloadUrl, { headers: auth(s.token) })).arrayBuffer());
    const meta = await sharp(out).metadata();
    assert.deepEqual([meta.width, meta.height], [80, 20]);
    const one = await fetch(`${s.url}/api/v1/tools/image/stitch`, {
      method: 'POST',
      headers: auth(s.token),
      body: await form({ file: [await filePart(a)] }),
    });
    assert.equal(one.status, 400);
  });

  it('never stores passwords from the settings in the job record', async () => {
    const { PDFDocument } = await import('@cantoo/pdf-lib');
    const doc = await PDFDocument.create();
    doc.addPage([200, 200]);
    const pdf = path.join(dir, 'plain.pdf');
    await writeFile(pdf, await doc.save());
    const res = await fetch(`${s.url}/api/v1/tools/pdf/protect-pdf`, {
      method: 'POST',
      headers: auth(s.token),
      body: await form({ file: await filePart(pdf), settings: '{"userPassword": "hunter2-secret"}' }),
    });
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    const out = Buffer.from(await (await fetch(s.url + body.downloadUrl, { headers: auth(s.token) })).arrayBuffer());
    assert.ok(out.includes('/Encrypt'), 'the output is encrypted');
    const job = await (await fetch(`${s.url}/api/v1/jobs/${body.jobId}`, { headers: auth(s.token) })).json();
    assert.equal(job.settings.userPassword, '[redacted]');
    const row = await s.app.kiln.store.db.selectFrom('jobs').select('settings').where('id', '=', body.jobId).executeTakeFirstOrThrow();
    assert.ok(!row.settings.includes('hunter2'));
  });

  it('cancels a running job: the engine is stopped and nothing remains', async () => {
    const lazy = await startServer({ env: { SYNC_WAIT_MS: '0' } });
    try {
      const { jobId, stream: events } = await runningVideoJob(lazy, 'long.mp4');
      const c = await fetch(`${lazy.url}/api/v1/jobs/${jobId}/cancel`, { method: 'POST', headers: auth(lazy.token) });
      const view = await c.json();
      assert.equal(c.status, 200, JSON.stringify(view));
      assert.equal(view.status, 'cancelled');
      const ev = await events;
      assert.equal(ev.events.at(-1)?.event, 'failed');
      assert.equal((ev.events.at(-1)!.data as { code: string }).code, 'CANCELLED');
      assert.equal(existsSync(path.join(lazy.dataDir, 'jobs', jobId)), false);
      assert.equal(lazy.app.kiln.jobs.queue.state().running, 0);
    } finally {
      await lazy.close();
    }
  });

  it('marks a job failed when the daemon stops while it runs, sends heartbeats meanwhile', async () => {
    let lazy = await startServer({ env: { SYNC_WAIT_MS: '0', KILN_SSE_HEARTBEAT_MS: '50' } });
    try {
      const { jobId, stream: heard } = await runningVideoJob(lazy, 'long2.mp4');
      await new Promise((r) => setTimeout(r, 300));
      lazy = await lazy.restart();
      const sse = await heard;
      assert.ok(sse.comments.includes('heartbeat'), 'keep-alive comments while the job runs');
      assert.equal(sse.events.at(-1)?.event, 'failed', 'the stream ends with the failure, not a cut connection');
      const job = await (await fetch(`${lazy.url}/api/v1/jobs/${jobId}`, { headers: auth(lazy.token) })).json();
      assert.equal(job.status, 'failed');
      assert.equal(job.error.reason, 'daemon-shutdown');
      assert.equal(existsSync(path.join(lazy.dataDir, 'jobs', jobId)), false);
    } finally {
      await lazy.close();
    }
  });
});

/**
 * A 40-s video posted to compress-video (a run that lasts), its progress stream opened, once the job
 * reads `running`: for the tests that stop a job or the daemon while the engine works.
 */
async function runningVideoJob(s: TestServer, name: string) {
  const video = path.join(dir, name);
  await exec(
    'ffmpeg',
    [
      '-v',
      'error',
      '-f',
      'lavfi',
      '-i',
      'testsrc2=size=640x360:rate=25:duration=40',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-pix_fmt',
      'yuv420p',
      '-y',
      video,
    ],
    { timeoutMs: 120_000 },
  );
  const res = await fetch(`${s.url}/api/v1/tools/video/compress-video`, {
    method: 'POST',
    headers: auth(s.token),
    body: await form({ file: await filePart(video), settings: '{"quality": "strong"}' }),
  });
  assert.equal(res.status, 202);
  const { jobId } = (await res.json()) as { jobId: string };
  const stream = readSse(`${s.url}/api/v1/jobs/${jobId}/progress`, s.token, 60_000);
  let state = '';
  for (let i = 0; i < 200 && state !== 'running'; i++) {
    state = (await (await fetch(`${s.url}/api/v1/jobs/${jobId}`, { headers: auth(s.token) })).json()).status;
    if (state !== 'running') await new Promise((r) => setTimeout(r, 25));
  }
  assert.equal(state, 'running');
  return { jobId, stream };
}
