/**
 * The daemon over real HTTP: tool runs (200 and 202), progress events, downloads, batch, auth,
 * errors, restart persistence and cancellation. Run against PostgreSQL by postgres.test.ts.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir, readFile, stat, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { jobRow } from '../helpers/job-row.js';
import { filePart, form, login, readSse, startServer, type TestServer } from '../helpers/server.js';
import { insertJob } from '../../daemon/store/jobs.js';
import { readZip } from '../helpers/zip.js';

const dir = tempDir();

function auth(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

async function post(
  s: TestServer,
  route: string,
  body: FormData | object,
  token = s.token,
): Promise<{ status: number; json: any; headers: Headers }> {
  const isForm = body instanceof FormData;
  const res = await fetch(s.url + route, {
    method: 'POST',
    headers: { ...(token ? auth(token) : {}), ...(isForm ? {} : { 'content-type': 'application/json' }) },
    body: isForm ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined, headers: res.headers };
}

describe('daemon HTTP API', () => {
  let s: TestServer;
  let jpg: string;
  before(async () => {
    s = await startServer();
    jpg = await makeImage(dir, 'photo one.jpg', 200, 100);
  });
  after(() => s.close());

  it('runs a tool inside the sync window: 200, then downloads the output', async () => {
    const r = await post(
      s,
      '/api/v1/tools/image/resize',
      await form({ file: await filePart(jpg), settings: JSON.stringify({ width: 50 }) }),
    );
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.match(r.json.jobId, /^[0-9a-f]{24}$/);
    assert.equal(r.json.downloadUrl, `/api/v1/download/${r.json.jobId}/photo%20one.jpg`);
    assert.equal(r.json.originalSize, (await stat(jpg)).size);
    assert.ok(r.json.processedSize > 0);

    const dl = await fetch(s.url + r.json.downloadUrl, { headers: auth(s.token) });
    assert.equal(dl.status, 200);
    assert.equal(dl.headers.get('content-type'), 'image/jpeg');
    assert.equal(dl.headers.get('content-disposition'), `attachment; filename="photo one.jpg"; filename*=UTF-8''photo%20one.jpg`);
    const body = Buffer.from(await dl.arrayBuffer());
    assert.equal(body.length, r.json.processedSize);
    const meta = await sharp(body).metadata();
    assert.deepEqual([meta.width, meta.height, meta.format], [50, 25, 'jpeg']);

    const part = await fetch(s.url + r.json.downloadUrl, { headers: { ...auth(s.token), range: 'bytes=2-11' } });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), `bytes 2-11/${body.length}`);
    assert.deepEqual(Buffer.from(await part.arrayBuffer()), body.subarray(2, 12));
    const suffix = await fetch(s.url + r.json.downloadUrl, { headers: { ...auth(s.token), range: 'bytes=-5' } });
    assert.equal(suffix.status, 206);
    assert.deepEqual(Buffer.from(await suffix.arrayBuffer()), body.subarray(body.length - 5));
    const outside = await fetch(s.url + r.json.downloadUrl, { headers: { ...auth(s.token), range: `bytes=${body.length}-` } });
    assert.equal(outside.status, 416);
    assert.equal(outside.headers.get('content-range'), `bytes */${body.length}`);
    // The error alone: not saved by a browser under the file's name, not validated as the file.
    assert.equal(outside.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.equal(outside.headers.get('content-disposition'), null);
    assert.equal(outside.headers.get('last-modified'), null);
    assert.equal((await outside.json()).error.code, 'USAGE_ERROR');
    const wrongName = await fetch(`${s.url}/api/v1/download/${r.json.jobId}/other.jpg`, { headers: auth(s.token) });
    assert.equal(wrongName.status, 404);

    const job = await (await fetch(`${s.url}/api/v1/jobs/${r.json.jobId}`, { headers: auth(s.token) })).json();
    assert.equal(job.status, 'completed');
    assert.deepEqual(job.settings.width, 50);
    assert.equal(job.progress.percent, 100);
  });

  it('merges plain form fields into the settings, coerced to their types', async () => {
    const r = await post(
      s,
      '/api/v1/tools/image/resize',
      await form({ file: await filePart(jpg), width: '40', settings: '{"height": 40}', fit: 'fill' }),
    );
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const body = Buffer.from(await (await fetch(s.url + r.json.downloadUrl, { headers: auth(s.token) })).arrayBuffer());
    const meta = await sharp(body).metadata();
    assert.deepEqual([meta.width, meta.height], [40, 40]);
  });

  it('streams progress events, then the result; a late client gets the final event at once', async () => {
    const lazy = await startServer({ env: { SYNC_WAIT_MS: '0' } });
    try {
      const r = await post(
        lazy,
        '/api/v1/tools/image/resize',
        await form({ file: await filePart(jpg), settings: '{"width": 30}', clientJobId: 'mine-1' }),
      );
      assert.equal(r.status, 202, JSON.stringify(r.json));
      assert.deepEqual(Object.keys(r.json).sort(), ['async', 'eventsUrl', 'jobId', 'statusUrl']);
      assert.equal(r.json.async, true);
      const live = await readSse(`${lazy.url}/api/v1/jobs/${r.json.jobId}/progress`, lazy.token);
      assert.equal(live.status, 200);
      assert.match(live.contentType ?? '', /^text\/event-stream/);
      const last = live.events.at(-1)!;
      assert.equal(last.event, 'completed', JSON.stringify(live.events));
      assert.ok(
        live.events.every((e) => e.id && /^\d+$/.test(e.id)),
        'every event has an id',
      );
      for (const e of live.events.slice(0, -1)) {
        assert.equal(e.event, 'progress');
        assert.equal(typeof (e.data as { percent: number }).percent, 'number');
      }
      const result = last.data as { jobId: string; downloadUrl: string; processedSize: number };
      assert.equal(result.jobId, r.json.jobId);
      const img = Buffer.from(await (await fetch(lazy.url + result.downloadUrl, { headers: auth(lazy.token) })).arrayBuffer());
      assert.equal((await sharp(img).metadata()).width, 30);

      const late = await readSse(`${lazy.url}/api/v1/jobs/${r.json.jobId}/progress`, lazy.token, 3000);
      assert.equal(late.events.length, 1);
      assert.equal(late.events[0]!.event, 'completed');
      assert.deepEqual(late.events[0]!.data, last.data);

      const list = await (await fetch(`${lazy.url}/api/v1/jobs?clientJobId=mine-1`, { headers: auth(lazy.token) })).json();
      assert.deepEqual(
        list.jobs.map((j: { jobId: string }) => j.jobId),
        [r.json.jobId],
      );
      assert.equal((await (await fetch(`${lazy.url}/api/v1/jobs?clientJobId=other`, { headers: auth(lazy.token) })).json()).jobs.length, 0);
    } finally {
      await lazy.close();
    }
  });

  it('streams a failed event for a job that fails in the background', async () => {
    const lazy = await startServer({ env: { SYNC_WAIT_MS: '0' } });
    try {
      // A JPEG signature with garbage after it: accepted from its bytes, fails in the decoder.
      const bad = path.join(dir, 'junk.jpg');
      await writeFile(
        bad,
        Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.from('JFIF\0 but nothing decodable after it'.repeat(10))]),
      );
      const r = await post(lazy, '/api/v1/tools/image/resize', await form({ file: await filePart(bad), settings: '{"width": 30}' }));
      assert.equal(r.status, 202, JSON.stringify(r.json));
      const ev = await readSse(`${lazy.url}/api/v1/jobs/${r.json.jobId}/progress`, lazy.token);
      const last = ev.events.at(-1)!;
      assert.equal(last.event, 'failed');
      assert.equal((last.data as { code: string }).code, 'UNSUPPORTED_INPUT');
      // Nothing of the failed run stays on disk.
      assert.equal(existsSync(path.join(lazy.dataDir, 'jobs', r.json.jobId)), false);
    } finally {
      await lazy.close();
    }
  });

  it('answers a corrupt upload with 415 UNSUPPORTED_INPUT and keeps no temp files', async () => {
    const bad = path.join(dir, 'broken.jpg');
    const good = await readFile(jpg);
    await writeFile(bad, Buffer.concat([good.subarray(0, 3), Buffer.alloc(200, 7)]));
    const r = await post(s, '/api/v1/tools/image/resize', await form({ file: await filePart(bad), settings: '{"width": 30}' }));
    assert.equal(r.status, 415, JSON.stringify(r.json));
    assert.equal(r.json.error.code, 'UNSUPPORTED_INPUT');
    assert.equal(typeof r.json.error.message, 'string');
    // Larger than fastify's JSON body limit: uploads are not bound by it, only by MAX_UPLOAD_MB.
    const big = path.join(dir, 'big-noise.jpg');
    await writeFile(big, Buffer.alloc(12 * 1024 * 1024, 0x5a));
    const r2 = await post(s, '/api/v1/tools/image/resize', await form({ file: await filePart(big), settings: '{"width": 30}' }));
    assert.equal(r2.status, 415, JSON.stringify(r2.json));
    // A finished job's output is the file at its path (uploads held in memory) or in its directory's out/.
    const jobs = await readdir(path.join(s.dataDir, 'jobs'), { withFileTypes: true });
    for (const j of jobs)
      assert.ok(j.isFile() || existsSync(path.join(s.dataDir, 'jobs', j.name, 'out')), `only finished outputs remain (${j.name})`);
  });

  it('rejects bad settings with 400 VALIDATION_ERROR and details, before queueing', async () => {
    const r = await post(s, '/api/v1/tools/image/resize', await form({ file: await filePart(jpg), settings: '{"width": -5}' }));
    assert.equal(r.status, 400);
    assert.equal(r.json.error.code, 'VALIDATION_ERROR');
    assert.equal(r.json.error.details[0].path, 'width');
    const typo = await post(s, '/api/v1/tools/image/resize', await form({ file: await filePart(jpg), settings: '{"widht": 5}' }));
    assert.equal(typo.status, 400);
    assert.match(typo.json.error.message, /did you mean width/);
    const notJson = await post(s, '/api/v1/tools/image/resize', await form({ file: await filePart(jpg), settings: '{width' }));
    assert.equal(notJson.status, 400);
    assert.equal(notJson.json.error.code, 'VALIDATION_ERROR');
    const noFile = await post(s, '/api/v1/tools/image/resize', await form({ settings: '{"width": 5}' }));
    assert.equal(noFile.status, 400);
    assert.match(noFile.json.error.message, /exactly one input file/);
    // The file library is installed: an unknown item is simply not found.
    const lib = await post(s, '/api/v1/tools/image/resize', await form({ fileId: 'abc', settings: '{"width": 5}' }));
    assert.equal(lib.status, 404);
    assert.match(lib.json.error.message, /library item abc/);
  });

  it('takes the input from the file library and saves the output there when fileId is given', async () => {
    const saved: string[] = [];
    s.app.kiln.fileLibrary = {
      async resolveInput(_user, fileId, inDir) {
        assert.equal(fileId, 'item-1');
        const p = path.join(inDir, 'library.jpg');
        await writeFile(p, await readFile(jpg));
        return { path: p, name: 'library.jpg', size: (await stat(p)).size };
      },
      async saveOutput(_user, fileId, job) {
        saved.push(`${fileId}:${job.output_name}`);
        return 'version-2';
      },
    };
    try {
      const r = await post(s, '/api/v1/tools/image/resize', await form({ fileId: 'item-1', settings: '{"width": 12}' }));
      assert.equal(r.status, 200, JSON.stringify(r.json));
      assert.equal(r.json.savedFileId, 'version-2');
      assert.deepEqual(saved, ['item-1:library.jpg']);
      const job = await (await fetch(`${s.url}/api/v1/jobs/${r.json.jobId}`, { headers: auth(s.token) })).json();
      assert.equal(job.result.savedFileId, 'version-2');
    } finally {
      delete s.app.kiln.fileLibrary;
    }
  });

  it('names the right route when a tool is called under the wrong section', async () => {
    const r = await post(s, '/api/v1/tools/video/resize', await form({ file: await filePart(jpg) }));
    assert.equal(r.status, 404);
    assert.equal(r.json.error.code, 'NOT_FOUND');
    assert.match(r.json.error.message, /\/api\/v1\/tools\/image\/resize/);
    const none = await post(s, '/api/v1/tools/image/no-such-tool', {});
    assert.equal(none.status, 404);
    const route = await fetch(`${s.url}/api/v1/nothing-here`, { headers: auth(s.token) });
    assert.equal(route.status, 404);
    assert.equal((await route.json()).error.code, 'NOT_FOUND');
  });

  it('maps framework errors into the one error shape', async () => {
    const badJson = await fetch(`${s.url}/api/v1/api-keys`, {
      method: 'POST',
      headers: { ...auth(s.token), 'content-type': 'application/json' },
      body: '{"name": ',
    });
    assert.equal(badJson.status, 400);
    assert.equal((await badJson.json()).error.code, 'USAGE_ERROR');
    const weird = await fetch(`${s.url}/api/v1/tools/image/resize`, {
      method: 'POST',
      headers: { ...auth(s.token), 'content-type': 'application/x-weird' },
      body: 'x',
    });
    assert.equal(weird.status, 415);
    assert.equal((await weird.json()).error.code, 'UNSUPPORTED_INPUT');
    const huge = await fetch(`${s.url}/api/v1/api-keys`, {
      method: 'POST',
      headers: { ...auth(s.token), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'x'.repeat(11 * 1024 * 1024) }),
    });
    assert.equal(huge.status, 413);
    assert.equal((await huge.json()).error.code, 'LIMIT_EXCEEDED');
  });

  it('answers what the router and the HTTP parser refuse in the one error shape too', async () => {
    const shape = async (res: Response, status: number, code: string) => {
      const text = await res.text();
      assert.equal(res.status, status, text);
      const body = JSON.parse(text);
      assert.equal(body.error.code, code, text);
      assert.doesNotMatch(text, /FST_|statusCode/);
    };
    // A percent sign that does not decode, a path parameter past maxParamLength.
    await shape(await fetch(`${s.url}/api/v1/jobs/%ZZ`, { headers: auth(s.token) }), 400, 'USAGE_ERROR');
    await shape(await fetch(`${s.url}/api/v1/jobs/${'a'.repeat(1100)}`, { headers: auth(s.token) }), 404, 'NOT_FOUND');
    // A multipart body cut off inside a part was a 500 INTERNAL ("Unexpected end of multipart data").
    await shape(
      await fetch(`${s.url}/api/v1/tools/image/resize`, {
        method: 'POST',
        headers: { ...auth(s.token), 'content-type': 'multipart/form-data; boundary=zz' },
        body: '--zz\r\nContent-Disposition: form-data; name="file"; filename="a.jpg"\r\n\r\nabc',
      }),
      400,
      'USAGE_ERROR',
    );
    // Headers over node's limit never reach fastify: 431 as HTTP has it, with the one body.
    await shape(await fetch(`${s.url}/api/v1/health`, { headers: { 'x-big': 'a'.repeat(20_000) } }), 431, 'LIMIT_EXCEEDED');
    assert.equal((await fetch(`${s.url}/api/v1/health`)).status, 200);
  });

  it('pages the job list with limit and offset; one that is not a whole number is 400, not the default', async () => {
    const list = async (q: string) => {
      const res = await fetch(`${s.url}/api/v1/jobs${q}`, { headers: auth(s.token) });
      return { status: res.status, body: (await res.json()) as any };
    };
    const all = await list('?limit=500');
    assert.ok(all.body.jobs.length >= 2, JSON.stringify(all.body));
    const second = await list('?limit=1&offset=1');
    assert.equal(second.status, 200);
    assert.deepEqual([second.body.limit, second.body.offset, second.body.jobs.length], [1, 1, 1]);
    assert.equal(second.body.jobs[0].jobId, all.body.jobs[1].jobId);
    // Above the largest page it is clamped and says so.
    assert.equal((await list('?limit=100000')).body.limit, 500);
    for (const q of ['?limit=abc', '?limit=0', '?limit=2.5', '?offset=-1', '?offset=x', '?offset=1e3', '?limit=0x10']) {
      const r = await list(q);
      assert.equal(r.status, 400, `${q}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.error.code, 'VALIDATION_ERROR');
      assert.equal(r.body.error.details[0].path, q.slice(1).split('=')[0]);
    }
    const audit = await fetch(`${s.url}/api/v1/admin/audit?limit=abc`, { headers: auth(s.token) });
    assert.equal(audit.status, 400);
  });

  it('refuses a repeated query parameter with 400, never a 500', async () => {
    for (const route of [
      '/api/v1/jobs?clientJobId=a&clientJobId=b',
      '/api/v1/files?name=a&name=b',
      '/api/v1/files?type=a&type=b&owner=x',
    ]) {
      const res = await fetch(s.url + route, { headers: auth(s.token) });
      const body = await res.json();
      assert.equal(res.status, 400, `${route}: ${JSON.stringify(body)}`);
      assert.equal(body.error.code, 'VALIDATION_ERROR');
      assert.equal(body.error.details[0].message, 'given more than once');
    }
    const one = await fetch(`${s.url}/api/v1/jobs?clientJobId=a&limit=1`, { headers: auth(s.token) });
    assert.equal(one.status, 200);
  });

  it('removes outputs after outputTtlHours (24) and job records after jobRecordTtlHours (168)', async () => {
    const r = await post(s, '/api/v1/tools/image/resize', await form({ file: await filePart(jpg), settings: '{"width": 12}' }));
    assert.equal(r.status, 200);
    // The job's files: its directory, or its objects when the server keeps them in a bucket (KILN_TEST_S3).
    const jobFiles = async () => {
      if (s.app.kiln.storage.kind === 'local') return existsSync(path.join(s.dataDir, 'jobs', r.json.jobId));
      for await (const _ of s.app.kiln.storage.list(`jobs/${r.json.jobId}/`)) return true;
      return false;
    };
    const jobUrl = `${s.url}/api/v1/jobs/${r.json.jobId}`;
    assert.ok(await jobFiles());
    assert.equal(await s.app.kiln.jobs.sweep(Date.now()), 0, 'nothing is old yet');
    const removed = await s.app.kiln.jobs.sweep(Date.now() + 25 * 3_600_000);
    assert.ok(removed >= 1);
    assert.equal(await jobFiles(), false);
    const gone = await fetch(s.url + r.json.downloadUrl, { headers: auth(s.token) });
    assert.equal(gone.status, 404);
    assert.match((await gone.json()).error.message, /expired/);
    // The record stays, without a download link.
    const kept = await (await fetch(jobUrl, { headers: auth(s.token) })).json();
    assert.equal(kept.status, 'completed');
    assert.equal(kept.result.downloadUrl, undefined);
    assert.equal((await fetch(jobUrl, { headers: auth(s.token) })).status, 200);
    await s.app.kiln.jobs.sweep(Date.now() + 169 * 3_600_000);
    assert.equal((await fetch(jobUrl, { headers: auth(s.token) })).status, 404);
  });

  it('refuses uploads over MAX_UPLOAD_MB with 413 LIMIT_EXCEEDED', async () => {
    const small = await startServer({ env: { MAX_UPLOAD_MB: '0.01' } });
    try {
      const big = path.join(dir, 'big.png');
      await writeFile(big, Buffer.alloc(40_000, 1));
      const r = await post(small, '/api/v1/tools/image/resize', await form({ file: await filePart(big), settings: '{"width": 10}' }));
      assert.equal(r.status, 413, JSON.stringify(r.json));
      assert.equal(r.json.error.code, 'LIMIT_EXCEEDED');
      assert.deepEqual(await readdir(path.join(small.dataDir, 'jobs')), []);
    } finally {
      await small.close();
    }
  });

  it('runs a batch: streamed ZIP with every output and a manifest naming the bad file', async () => {
    const a = await makeImage(dir, 'a.png', 120, 60);
    const b = await makeImage(dir, 'b.jpg', 80, 80);
    const bad = path.join(dir, 'bad.png');
    await writeFile(bad, Buffer.from('definitely not a png'));
    const fd = await form({ files: [await filePart(a), await filePart(bad), await filePart(b)], settings: '{"width": 20}' });
    const res = await fetch(`${s.url}/api/v1/tools/image/resize/batch`, { method: 'POST', headers: auth(s.token), body: fd });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/zip');
    // The outcome is in the headers: no need to unzip to see that one input failed.
    assert.deepEqual(
      ['x-batch-total', 'x-batch-succeeded', 'x-batch-failed'].map((h) => res.headers.get(h)),
      ['3', '2', '1'],
    );
    const jobId = res.headers.get('x-job-id');
    assert.match(jobId ?? '', /^[0-9a-f]{24}$/);
    const entries = await readZip(Buffer.from(await res.arrayBuffer()));
    assert.deepEqual([...entries.keys()].sort(), ['a.png', 'b.jpg', 'manifest.json']);
    assert.equal((await sharp(entries.get('a.png')!).metadata()).width, 20);
    assert.equal((await sharp(entries.get('b.jpg')!).metadata()).width, 20);
    const manifest = JSON.parse(entries.get('manifest.json')!.toString());
    assert.equal(manifest.jobId, jobId);
    assert.equal(manifest.total, 3);
    assert.equal(manifest.failed, 1);
    assert.deepEqual(
      manifest.items.map((i: { input: string }) => i.input),
      ['a.png', 'bad.png', 'b.jpg'],
    );
    assert.equal(manifest.items[0].output, 'a.png');
    assert.equal(manifest.items[1].error.code, 'UNSUPPORTED_INPUT');
    const job = await (await fetch(`${s.url}/api/v1/jobs/${jobId}`, { headers: auth(s.token) })).json();
    assert.equal(job.status, 'completed');
    assert.equal(job.kind, 'batch');
    assert.deepEqual(job.result.data, { total: 3, succeeded: 2, failed: 1 });
    // The files are removed once the archive has been read out, just after the last byte is sent.
    for (let i = 0; i < 50 && existsSync(path.join(s.dataDir, 'jobs', jobId!)); i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(existsSync(path.join(s.dataDir, 'jobs', jobId!)), false);
  });

  it('rejects bad batch settings before streaming anything', async () => {
    const fd = await form({ files: [await filePart(jpg)], settings: '{"width": 0}' });
    const r = await post(s, '/api/v1/tools/image/resize/batch', fd);
    assert.equal(r.status, 400);
    assert.equal(r.json.error.code, 'VALIDATION_ERROR');
    const wrong = await post(s, '/api/v1/tools/pdf/resize/batch', await form({ files: [await filePart(jpg)] }));
    assert.equal(wrong.status, 404);
    assert.match(wrong.json.error.message, /\/api\/v1\/tools\/image\/resize\/batch/);
    // Not batched, and not for a second file: remove-background's backgroundImage is optional.
    const unbatched = await post(s, '/api/v1/tools/image/remove-background/batch', await form({ files: [await filePart(jpg)] }));
    assert.equal(unbatched.status, 404);
    assert.doesNotMatch(unbatched.json.error.message, /second file/);
    assert.match(unbatched.json.error.message, /not one of the batch tools.*POST \/api\/v1\/tools\/image\/remove-background\./);
  });

  it('requires credentials: 401 without, with a bad token, and after logout', async () => {
    const none = await fetch(`${s.url}/api/v1/jobs`);
    assert.equal(none.status, 401);
    assert.equal((await none.json()).error.code, 'UNAUTHORIZED');
    assert.equal((await fetch(`${s.url}/api/v1/jobs`, { headers: auth('nonsense') })).status, 401);
    const noTool = await post(s, '/api/v1/tools/image/resize', await form({ file: await filePart(jpg) }), '');
    assert.equal(noTool.status, 401);
    const cfg = await (await fetch(`${s.url}/api/v1/config/auth`)).json();
    assert.deepEqual(cfg, { authEnabled: true });
    const bad = await post(s, '/api/auth/login', { username: 'admin', password: 'wrong' }, '');
    assert.equal(bad.status, 401);
    const token = await login(s.url, 'admin', s.adminPassword);
    const session = await (await fetch(`${s.url}/api/auth/session`, { headers: auth(token) })).json();
    assert.equal(session.user.username, 'admin');
    assert.equal(session.user.role, 'admin');
    assert.equal((await post(s, '/api/auth/logout', {}, token)).status, 200);
    assert.equal((await fetch(`${s.url}/api/auth/session`, { headers: auth(token) })).status, 401);
  });

  it('rejects an expired session with 401', async () => {
    const token = await login(s.url, 'admin', s.adminPassword);
    assert.equal((await fetch(`${s.url}/api/auth/session`, { headers: auth(token) })).status, 200);
    await s.app.kiln.store.db
      .updateTable('sessions')
      .set({ expires_at: Date.now() - 1000 })
      .execute();
    const r = await fetch(`${s.url}/api/auth/session`, { headers: auth(token) });
    assert.equal(r.status, 401);
    assert.equal((await r.json()).error.reason, 'session-expired');
    s.token = await login(s.url, 'admin', s.adminPassword);
  });

  it('issues API keys that work as Bearer credentials until deleted', async () => {
    const created = await post(s, '/api/v1/api-keys', { name: 'ci' });
    assert.equal(created.status, 201);
    assert.match(created.json.key, /^si_[0-9a-f]{96}$/);
    assert.equal(created.json.name, 'ci');
    const stored = await s.app.kiln.store.db.selectFrom('api_keys').selectAll().where('id', '=', created.json.id).executeTakeFirstOrThrow();
    assert.ok(!stored.key_hash.includes(created.json.key.slice(3)), 'only a hash is stored');
    assert.match(stored.key_hash, /^scrypt\$/);
    const r = await post(
      s,
      '/api/v1/tools/image/resize',
      await form({ file: await filePart(jpg), settings: '{"width": 10}' }),
      created.json.key,
    );
    assert.equal(r.status, 200);
    const again = await fetch(`${s.url}/api/auth/session`, { headers: auth(created.json.key) });
    assert.equal((await again.json()).via, 'api-key');
    const list = await (await fetch(`${s.url}/api/v1/api-keys`, { headers: auth(s.token) })).json();
    assert.ok(list.keys.some((k: { id: string; key?: string }) => k.id === created.json.id && k.key === undefined));
    const del = await fetch(`${s.url}/api/v1/api-keys/${created.json.id}`, { method: 'DELETE', headers: auth(s.token) });
    assert.equal(del.status, 200);
    assert.equal((await fetch(`${s.url}/api/auth/session`, { headers: auth(created.json.key) })).status, 401);
    const forged = 'si_' + created.json.key.slice(3, 15) + '0'.repeat(84);
    assert.equal((await fetch(`${s.url}/api/auth/session`, { headers: auth(forged) })).status, 401);
  });

  it('keeps other users away from a job and its download (404), admins see all', async () => {
    const r = await post(s, '/api/v1/tools/image/resize', await form({ file: await filePart(jpg), settings: '{"width": 10}' }));
    const { createUser } = await import('../../daemon/store/users.js');
    await createUser(s.app.kiln.store.db, { username: 'bob', password: 'bob-password-1', role: 'user' });
    const bob = await login(s.url, 'bob', 'bob-password-1');
    assert.equal((await fetch(s.url + r.json.downloadUrl, { headers: auth(bob) })).status, 404);
    assert.equal((await fetch(`${s.url}/api/v1/jobs/${r.json.jobId}`, { headers: auth(bob) })).status, 404);
    assert.equal((await (await fetch(`${s.url}/api/v1/jobs`, { headers: auth(bob) })).json()).jobs.length, 0);
    const forbidden = await fetch(`${s.url}/api/v1/admin/health`, { headers: auth(bob) });
    assert.equal(forbidden.status, 403);
    assert.match((await forbidden.json()).error.message, /system:health/);
    const mine = await post(s, '/api/v1/tools/image/resize', await form({ file: await filePart(jpg), settings: '{"width": 10}' }), bob);
    assert.equal(mine.status, 200);
    const all = await (await fetch(`${s.url}/api/v1/jobs?limit=500`, { headers: auth(s.token) })).json();
    assert.ok(all.jobs.some((j: { jobId: string }) => j.jobId === mine.json.jobId));
  });

  it('reports health, readiness and admin diagnostics', async () => {
    const h = await fetch(`${s.url}/api/v1/health`);
    assert.equal(h.status, 200);
    const hb = await h.json();
    assert.equal(hb.status, 'healthy');
    assert.match(hb.version, /^\d+\.\d+\.\d+/);
    const ready = await fetch(`${s.url}/api/v1/readyz`);
    assert.equal(ready.status, 200);
    const rb = await ready.json();
    assert.deepEqual(rb.checks.disk, { ok: true }, 'public readiness shows no disk figures');
    const admin = await (await fetch(`${s.url}/api/v1/admin/health`, { headers: auth(s.token) })).json();
    assert.equal(admin.database.ok, true);
    assert.equal(admin.database.kind, process.env.KILN_TEST_PG ? 'postgres' : 'sqlite');
    assert.equal(admin.gpu.available, false);
    assert.equal(typeof admin.uptimeSeconds, 'number');
    assert.equal(typeof admin.storage.freeBytes, 'number', 'disk figures are for admins');
    assert.equal(admin.queue.kind, 'in-process');
  });

  it('lists the catalog with routes and settings', async () => {
    const cat = await (await fetch(`${s.url}/api/v1/tools`, { headers: auth(s.token) })).json();
    const resize = cat.tools.find((t: { id: string }) => t.id === 'resize');
    assert.equal(resize.route, '/api/v1/tools/image/resize');
    assert.equal(resize.batchRoute, '/api/v1/tools/image/resize/batch');
    assert.ok(resize.settings.some((x: { name: string }) => x.name === 'width'));
    assert.ok(Array.isArray(cat.presets));
  });
});

describe('daemon lifecycle', () => {
  it('on first start creates the admin with a generated password in a 0600 file', async () => {
    const s = await startServer({ generatePassword: true });
    try {
      const file = path.join(s.dataDir, 'initial-admin-password');
      const st = await stat(file);
      assert.equal(st.mode & 0o777, 0o600);
      const pw = (await readFile(file, 'utf8')).trim();
      assert.ok(pw.length >= 20);
      assert.equal(pw, s.app.kiln.bootstrap.generatedPassword);
      assert.ok(await login(s.url, 'admin', pw));
      const again = await s.restart();
      assert.equal(again.app.kiln.bootstrap.generatedPassword, undefined, 'no second admin on restart');
      await again.close();
    } catch (e) {
      await s.close();
      throw e;
    }
  });

  it('after a restart finished jobs still download and interrupted ones are marked failed', async () => {
    let s = await startServer();
    try {
      const jpg = await makeImage(dir, 'restart.jpg', 64, 64);
      const r = await post(s, '/api/v1/tools/image/resize', await form({ file: await filePart(jpg), settings: '{"width": 16}' }));
      assert.equal(r.status, 200);
      // A run that was in flight when the process died: its row says running and its files are on disk.
      const crashedDir = path.join(s.dataDir, 'jobs', 'c'.repeat(24));
      await mkdir(path.join(crashedDir, 'in'), { recursive: true });
      await writeFile(path.join(crashedDir, 'in', '0-x.jpg'), 'partial');
      const owner = (await s.app.kiln.store.db.selectFrom('users').select('id').executeTakeFirstOrThrow()).id;
      await insertJob(
        s.app.kiln.store.db,
        jobRow(owner, {
          id: 'c'.repeat(24),
          progress: 40,
          instance_id: s.app.kiln.jobs.instanceId,
          work_dir: crashedDir,
          original_size: 7,
        }),
      );
      s = await s.restart();
      const dl = await fetch(s.url + r.json.downloadUrl, { headers: auth(s.token) });
      assert.equal(dl.status, 200);
      assert.equal((await sharp(Buffer.from(await dl.arrayBuffer())).metadata()).width, 16);
      const crashed = await (await fetch(`${s.url}/api/v1/jobs/${'c'.repeat(24)}`, { headers: auth(s.token) })).json();
      assert.equal(crashed.status, 'failed');
      assert.equal(crashed.error.reason, 'daemon-restarted');
      assert.equal(existsSync(crashedDir), false);
      const late = await readSse(`${s.url}/api/v1/jobs/${r.json.jobId}/progress`, s.token, 3000);
      assert.equal(late.events[0]?.event, 'completed');
    } finally {
      await s.close();
    }
  });

  it('cancels a queued job: status cancelled, failed event, files removed', async () => {
    const s = await startServer({ env: { SYNC_WAIT_MS: '0', JOB_CONCURRENCY: '1' } });
    let release = () => {};
    try {
      // Hold the only slot so the next run stays queued.
      const blocker = s.app.kiln.jobs.queue.run('blocker', () => new Promise<void>((resolve) => (release = resolve)));
      const jpg = await makeImage(dir, 'cancel.jpg', 64, 64);
      const r = await post(s, '/api/v1/tools/image/resize', await form({ file: await filePart(jpg), settings: '{"width": 16}' }));
      assert.equal(r.status, 202);
      const queued = await (await fetch(`${s.url}/api/v1/jobs/${r.json.jobId}`, { headers: auth(s.token) })).json();
      assert.equal(queued.status, 'queued');
      const events = readSse(`${s.url}/api/v1/jobs/${r.json.jobId}/progress`, s.token);
      await new Promise((res) => setTimeout(res, 100));
      const c = await post(s, `/api/v1/jobs/${r.json.jobId}/cancel`, {});
      assert.equal(c.status, 200, JSON.stringify(c.json));
      assert.equal(c.json.status, 'cancelled');
      assert.equal(c.json.error.code, 'CANCELLED');
      const ev = await events;
      assert.equal(ev.events.at(-1)?.event, 'failed');
      assert.equal((ev.events.at(-1)!.data as { code: string }).code, 'CANCELLED');
      assert.equal(existsSync(path.join(s.dataDir, 'jobs', r.json.jobId)), false);
      const again = await post(s, `/api/v1/jobs/${r.json.jobId}/cancel`, {});
      assert.equal(again.status, 409);
      release();
      await blocker;
    } finally {
      release();
      await s.close();
    }
  });

  it('answers 503 unhealthy / not ready when the database is unusable', async () => {
    const s = await startServer();
    try {
      await s.app.kiln.store.close();
      const h = await fetch(`${s.url}/api/v1/health`);
      assert.equal(h.status, 503);
      assert.equal((await h.json()).status, 'unhealthy');
      const ready = await fetch(`${s.url}/api/v1/readyz`);
      assert.equal(ready.status, 503);
      assert.equal((await ready.json()).checks.database.ok, false);
    } finally {
      await s.close();
    }
  });

  it('with AUTH_ENABLED=false every route is open and acts as the admin', async () => {
    const s = await startServer({ env: { AUTH_ENABLED: 'false' } });
    try {
      const session = await (await fetch(`${s.url}/api/auth/session`)).json();
      assert.equal(session.user.role, 'admin');
      assert.equal(session.via, 'open');
      const jpg = await makeImage(dir, 'open.jpg', 32, 32);
      const r = await post(s, '/api/v1/tools/image/resize', await form({ file: await filePart(jpg), settings: '{"width": 8}' }), '');
      assert.equal(r.status, 200);
      assert.deepEqual(await (await fetch(`${s.url}/api/v1/config/auth`)).json(), { authEnabled: false });
    } finally {
      await s.close();
    }
  });
});
