/**
 * HTTP edge cases a sloppy or hostile client hits, over raw node:http requests: wrong methods (405 with
 * Allow, not 404), OPTIONS, conditional downloads (ETag, If-None-Match, If-Range) and repeated form fields.
 */
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { connect } from 'node:net';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { jobRow } from '../helpers/job-row.js';
import { insertJob } from '../../daemon/store/jobs.js';
import { filePart, form, startServer, type TestServer } from '../helpers/server.js';

const dir = tempDir();

interface Raw {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  json: any;
}

function raw(s: TestServer, method: string, p: string, headers: Record<string, string> = {}, body?: Buffer): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(s.url + p, { method, headers: { authorization: `Bearer ${s.token}`, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const b = Buffer.concat(chunks);
        let json: any;
        try {
          json = JSON.parse(b.toString());
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: b, json });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('HTTP edges', () => {
  let s: TestServer;
  let png: string;
  before(async () => {
    s = await startServer();
    png = await makeImage(dir, 'tiny.png', 8, 6);
  });
  after(() => s.close());

  it('answers a wrong method on an existing route 405 with Allow, and an unknown path 404', async () => {
    const put = await raw(s, 'PUT', '/api/v1/health');
    assert.equal(put.status, 405, put.body.toString());
    assert.equal(put.json.error.code, 'METHOD_NOT_ALLOWED');
    assert.deepEqual(put.headers.allow, 'GET, HEAD, OPTIONS');
    assert.deepEqual(put.json.error.details.allow, ['GET', 'HEAD', 'OPTIONS']);
    // A path with parameters: GET of a tool route (it takes POST only).
    const get = await raw(s, 'GET', '/api/v1/tools/image/resize');
    assert.equal(get.status, 405, get.body.toString());
    assert.equal(get.headers.allow, 'OPTIONS, POST');
    const del = await raw(s, 'DELETE', '/api/v1/download/0123456789abcdef01234567/a.png?x=1');
    assert.equal(del.status, 405);
    assert.equal(del.headers.allow, 'GET, HEAD, OPTIONS');
    const none = await raw(s, 'PUT', '/api/v1/no-such-thing');
    assert.equal(none.status, 404);
    assert.equal(none.json.error.code, 'NOT_FOUND');
    assert.equal(none.headers.allow, undefined);
  });

  it('answers OPTIONS with the Allow list and no CORS grant', async () => {
    const o = await raw(s, 'OPTIONS', '/api/v1/jobs/0123456789abcdef01234567', {
      origin: 'https://elsewhere.example',
      'access-control-request-method': 'DELETE',
    });
    assert.equal(o.status, 204, o.body.toString());
    assert.ok(o.headers.allow?.split(', ').includes('GET'), o.headers.allow);
    assert.equal(o.headers['access-control-allow-origin'], undefined);
    assert.equal((await raw(s, 'OPTIONS', '/api/v1/nothing-here')).status, 404);
  });
  it('downloads with a strong ETag: If-None-Match and If-Modified-Since answer 304, If-Range guards a resume', async () => {
    const run = await fetch(`${s.url}/api/v1/tools/image/resize`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.token}` },
      body: await form({ file: await filePart(png), settings: JSON.stringify({ width: 4 }) }),
    });
    const { downloadUrl } = (await run.json()) as { downloadUrl: string };
    const full = await raw(s, 'GET', downloadUrl);
    assert.equal(full.status, 200);
    const etag = full.headers.etag;
    assert.match(etag ?? '', /^"[^"]+"$/, 'a strong ETag');
    const lastModified = full.headers['last-modified']!;
    const size = full.body.length;

    const same = await raw(s, 'GET', downloadUrl, { 'if-none-match': `"other", ${etag}` });
    assert.equal(same.status, 304);
    assert.equal(same.body.length, 0);
    assert.equal(same.headers.etag, etag);
    assert.equal((await raw(s, 'HEAD', downloadUrl, { 'if-none-match': `W/${etag}` })).status, 304);
    assert.equal((await raw(s, 'GET', downloadUrl, { 'if-none-match': '"stale"' })).status, 200);
    assert.equal((await raw(s, 'GET', downloadUrl, { 'if-modified-since': lastModified })).status, 304);
    const older = new Date(Date.parse(lastModified) - 60_000).toUTCString();
    assert.equal((await raw(s, 'GET', downloadUrl, { 'if-modified-since': older })).status, 200);
    // If-None-Match decides when both are sent.
    assert.equal((await raw(s, 'GET', downloadUrl, { 'if-none-match': '"stale"', 'if-modified-since': lastModified })).status, 200);

    const resumed = await raw(s, 'GET', downloadUrl, { range: 'bytes=4-', 'if-range': etag! });
    assert.equal(resumed.status, 206);
    assert.deepEqual(resumed.body, full.body.subarray(4));
    const byDate = await raw(s, 'GET', downloadUrl, { range: 'bytes=4-', 'if-range': lastModified });
    assert.equal(byDate.status, 206);
    // Another file's validator: the whole of this one, never its tail under the old one's head.
    const changed = await raw(s, 'GET', downloadUrl, { range: 'bytes=4-', 'if-range': '"another-file"' });
    assert.equal(changed.status, 200);
    assert.equal(changed.body.length, size);
    assert.equal((await raw(s, 'GET', downloadUrl, { range: 'bytes=4-', 'if-range': older })).status, 200);
    const outside = await raw(s, 'GET', downloadUrl, { range: `bytes=${size + 10}-` });
    assert.equal(outside.status, 416);
    assert.equal(outside.headers.etag, undefined, 'the 416 error body carries no validator of the file');
  });
  it('refuses a text field sent twice, or a setting both in the settings JSON and as its own field, and keeps nothing', async () => {
    const jobsDir = path.join(s.dataDir, 'jobs');
    const before = await readdir(jobsDir).catch(() => []);
    const send = async (fields: [string, string][]) => {
      const fd = new FormData();
      fd.append('file', await filePart(png));
      for (const [k, v] of fields) fd.append(k, v);
      const res = await fetch(`${s.url}/api/v1/tools/image/resize`, {
        method: 'POST',
        headers: { authorization: `Bearer ${s.token}` },
        body: fd,
      });
      return { status: res.status, json: (await res.json()) as any };
    };
    const twice = await send([
      ['width', '4'],
      ['width', '5'],
    ]);
    assert.equal(twice.status, 400, JSON.stringify(twice.json));
    assert.equal(twice.json.error.code, 'VALIDATION_ERROR');
    assert.deepEqual(twice.json.error.details, [{ path: 'width', message: 'duplicate field' }]);
    const settingsTwice = await send([
      ['settings', '{"width":4}'],
      ['settings', '{"width":5}'],
    ]);
    assert.equal(settingsTwice.status, 400, JSON.stringify(settingsTwice.json));
    assert.match(settingsTwice.json.error.message, /settings was sent more than once/);
    const both = await send([
      ['settings', '{"width":4}'],
      ['width', '5'],
    ]);
    assert.equal(both.status, 400, JSON.stringify(both.json));
    assert.deepEqual(both.json.error.details, [{ path: 'width', message: 'duplicate setting' }]);
    // Each way once still works: the JSON string, or plain fields.
    assert.equal((await send([['settings', '{"width":4}']])).status, 200);
    const plain = await send([
      ['width', '4'],
      ['height', '3'],
    ]);
    assert.equal(plain.status, 200, JSON.stringify(plain.json));
    // Only the two runs that were accepted left a job directory.
    assert.equal((await readdir(jobsDir)).length - before.length, 2);
  });
  it('names outputs without bidirectional or C1 control characters from the upload name', async () => {
    const fd = new FormData();
    // "photo<RLO>gnp.exe" shows as "photoexe.png"; U+0085 is a C1 control (NEL).
    fd.append('file', await filePart(png, 'ph\u0085oto\u202egnp.exe.png'));
    fd.append('width', '4');
    const res = await fetch(`${s.url}/api/v1/tools/image/resize`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.token}` },
      body: fd,
    });
    const body = (await res.json()) as { downloadUrl: string };
    assert.equal(res.status, 200, JSON.stringify(body));
    const name = decodeURIComponent(body.downloadUrl.split('/').pop()!);
    assert.equal(name, 'ph_oto_gnp.exe.png');
    const dl = await raw(s, 'HEAD', body.downloadUrl);
    assert.equal(dl.headers['content-disposition'], `attachment; filename="ph_oto_gnp.exe.png"; filename*=UTF-8''ph_oto_gnp.exe.png`);
  });
  it('refuses text/plain and content-coded request bodies 415, and lets a bodyless text/plain POST through', async () => {
    const json = Buffer.from(JSON.stringify({ data: 'https://example.com' }));
    const plain = await raw(s, 'POST', '/api/v1/tools/image/qr-generate', { 'content-type': 'text/plain;charset=UTF-8' }, json);
    assert.equal(plain.status, 415, plain.body.toString());
    assert.equal(plain.json.error.code, 'UNSUPPORTED_INPUT');
    assert.match(plain.json.error.message, /application\/json/);
    const big = await raw(s, 'POST', '/api/v1/tools/image/qr-generate', { 'content-type': 'text/plain' }, Buffer.alloc(200_000, 'a'));
    assert.equal(big.status, 415, big.body.toString());
    const gz = await raw(
      s,
      'POST',
      '/api/v1/tools/image/qr-generate',
      { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      gzipSync(json),
    );
    assert.equal(gz.status, 415, gz.body.toString());
    assert.match(gz.json.error.message, /Content-Encoding gzip/);
    // The same JSON, labelled as JSON and not encoded, runs.
    const ok = await raw(
      s,
      'POST',
      '/api/v1/tools/image/qr-generate',
      { 'content-type': 'application/json', 'content-encoding': 'identity' },
      json,
    );
    assert.equal(ok.status, 200, ok.body.toString());
    // A POST without a body, labelled text/plain anyway (fetch with body ''), is not refused for its label.
    const cancel = await raw(
      s,
      'POST',
      `/api/v1/jobs/${ok.json.jobId}/cancel`,
      { 'content-type': 'text/plain;charset=UTF-8' },
      Buffer.alloc(0),
    );
    assert.notEqual(cancel.status, 415, cancel.body.toString());
    assert.equal(cancel.json?.error?.code === 'UNSUPPORTED_INPUT', false);
  });
  it('documents 429 on every rate-limited operation, as the limiter answers it', async () => {
    const limited = await startServer({ env: { RATE_LIMIT_PER_MINUTE: '3' } });
    try {
      const doc = parse((await raw(limited, 'GET', '/api/v1/openapi.yaml')).body.toString());
      const resize = doc.paths['/api/v1/tools/image/resize'].post.responses['429'];
      assert.ok(resize, 'the tool run documents 429');
      assert.ok(resize.headers['Retry-After']);
      assert.ok(doc.paths['/api/v1/jobs/{jobId}'].get.responses['429']);
      assert.ok(doc.paths['/api/v1/download/{jobId}/{filename}'].get.responses['429']);
      assert.equal(doc.paths['/api/v1/health'].get.responses['429'], undefined, 'the probes are not limited');
      // And the limiter answers it, in the error shape, with Retry-After.
      let last: Raw | undefined;
      for (let i = 0; i < 6; i++) last = await raw(limited, 'GET', '/api/v1/jobs/0123456789abcdef01234567');
      assert.equal(last!.status, 429, last!.body.toString());
      assert.equal(last!.json.error.code, 'RATE_LIMITED');
      assert.match(String(last!.headers['retry-after']), /^\d+$/);
      for (let i = 0; i < 6; i++) assert.equal((await raw(limited, 'GET', '/api/v1/health')).status, 200);
    } finally {
      await limited.close();
    }
  });
  it('keeps only the newest progress event for an SSE client that stops reading, then ends with the final one', async () => {
    const id = 'e'.repeat(24);
    const owner = (await s.app.kiln.store.db.selectFrom('users').select('id').executeTakeFirstOrThrow()).id;
    await insertJob(s.app.kiln.store.db, jobRow(owner, { id, progress: 1, instance_id: s.app.kiln.jobs.instanceId }));
    const { port } = new URL(s.url);
    const socket = connect(Number(port), '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write(`GET /api/v1/jobs/${id}/progress HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${s.token}\r\n\r\n`);
    const received = () => Buffer.concat(chunks).toString();
    for (let i = 0; i < 100 && !/event: progress/.test(received()); i++) await new Promise((r) => setTimeout(r, 50));
    assert.match(received(), /event: progress/, 'the stream started');
    // The client stops reading; 60 000 events of ~250 bytes (15 MB) are published meanwhile.
    socket.pause();
    const N = 60_000;
    const stage = 'x'.repeat(200);
    for (let i = 0; i < N; i++) {
      s.app.kiln.jobs.events.publish(id, { type: 'progress', percent: i % 100, stage });
      if (i % 2000 === 0) await new Promise((r) => setImmediate(r));
    }
    s.app.kiln.jobs.events.publish(id, { type: 'progress', percent: 99, stage: 'newest' });
    socket.resume();
    await new Promise((r) => setTimeout(r, 1000));
    s.app.kiln.jobs.events.publish(id, { type: 'completed', result: { jobId: id } });
    socket.end();
    await ended;
    const events = [...received().matchAll(/event: (\w+)\ndata: (.*)\n/g)].map((m) => ({ type: m[1], data: JSON.parse(m[2]!) }));
    const progress = events.filter((e) => e.type === 'progress');
    assert.ok(progress.length < N / 2, `${progress.length} of ${N} progress events were queued for a client that did not read`);
    assert.deepEqual(progress.at(-1)?.data, { percent: 99, stage: 'newest' }, 'the newest progress still arrives');
    assert.equal(events.at(-1)?.type, 'completed');
  });
  it('answers Expect: 100-continue with the refusal instead of 100 when the headers decide, and 100 otherwise', async () => {
    const { port } = new URL(s.url);
    // The first response head the client reads, having sent the headers only.
    const firstHead = (headers: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1', () =>
          socket.write(
            `POST /api/v1/tools/image/resize HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=XB\r\nExpect: 100-continue\r\n${headers}\r\n`,
          ),
        );
        let got = '';
        socket.on('data', (c: Buffer) => {
          got += c.toString();
          if (got.includes('\r\n\r\n')) {
            socket.destroy();
            resolve(got.split('\r\n', 1)[0]!);
          }
        });
        socket.on('error', reject);
        setTimeout(() => {
          socket.destroy();
          resolve(got || 'nothing');
        }, 5000);
      });
    assert.equal(await firstHead('Content-Length: 5000000\r\n'), 'HTTP/1.1 401 Unauthorized', 'no credentials: 401 before the body');
    assert.equal(
      await firstHead(`Authorization: Bearer ${s.token}\r\nContent-Length: ${(s.config.maxRequestMb + 1) * 1048576}\r\n`),
      'HTTP/1.1 413 Payload Too Large',
    );
    assert.equal(await firstHead(`Authorization: Bearer ${s.token}\r\nContent-Length: 5000000\r\n`), 'HTTP/1.1 100 Continue');
    // A client that sends Expect gets its run done.
    const fd = new FormData();
    fd.append('file', await filePart(png));
    fd.append('width', '4');
    const encoded = new Response(fd);
    const type = encoded.headers.get('content-type')!;
    const body = Buffer.from(await encoded.arrayBuffer());
    const r = await raw(s, 'POST', '/api/v1/tools/image/resize', { 'content-type': type, expect: '100-continue' }, body);
    assert.equal(r.status, 200, r.body.toString());
  });
});
