/**
 * Issue #16 items 6 and 10: request size limits (a text field, the whole request, a user's job storage)
 * answered 413 naming the limit; a client that stalls in its headers or body loses the connection; a
 * burst past the per-user rate limit is answered 429 with Retry-After while health probes and other
 * users go on.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { api, form, startServer, type TestServer } from '../helpers/server.js';
import { makeUser } from '../daemon/accounts/http.js';

const noisePng = async (side: number) =>
  new File(
    [
      new Uint8Array(
        await sharp(randomBytes(side * side * 3), { raw: { width: side, height: side, channels: 3 } })
          .png()
          .toBuffer(),
      ),
    ],
    'noise.png',
  );

function expect413(r: { status: number; body: { error?: { code: string; message: string } }; text: string }, setting: RegExp): void {
  assert.equal(r.status, 413, r.text);
  assert.equal(r.body.error?.code, 'LIMIT_EXCEEDED');
  assert.match(r.body.error!.message, /\d/, 'names the limit');
  assert.match(r.body.error!.message, setting);
}

describe('request size limits', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer({ env: { MAX_FIELD_KB: '64', MAX_REQUEST_MB: '2', USER_QUOTA_MB: '3', SYNC_WAIT_MS: '30000' } });
  });
  after(() => s.close());

  it('a text field over MAX_FIELD_KB, and text fields together over four times that, answer 413', async () => {
    const f = new FormData();
    f.append('file', await noisePng(8));
    f.append('settings', JSON.stringify({ width: 4, pad: 'x'.repeat(100 * 1024) }));
    expect413(await api(s, s.token, 'POST', '/api/v1/tools/image/resize', f), /64 KB \(MAX_FIELD_KB\)/);
    const g = new FormData();
    g.append('file', await noisePng(8));
    for (let i = 0; i < 5; i++) g.append(`f${i}`, 'y'.repeat(60 * 1024));
    expect413(await api(s, s.token, 'POST', '/api/v1/tools/image/resize', g), /256 KB/);
  });

  it('a request over MAX_REQUEST_MB answers 413, whether or not it declares its length', async () => {
    const big = new File([randomBytes(2.5 * 1048576)], 'big.png');
    expect413(await api(s, s.token, 'POST', '/api/v1/tools/image/resize', await form({ file: big })), /2 MB \(MAX_REQUEST_MB\)/);
    // Chunked (no Content-Length): counted as it streams.
    const req = new Request('http://x', { method: 'POST', body: await form({ file: big }) });
    const bytes = new Uint8Array(await req.arrayBuffer());
    const stream = new ReadableStream({
      start(c) {
        c.enqueue(bytes);
        c.close();
      },
    });
    const res = await fetch(`${s.url}/api/v1/tools/image/resize`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.token}`, 'content-type': req.headers.get('content-type')! },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    const j = (await res.json()) as { error: { message: string } };
    assert.equal(res.status, 413, JSON.stringify(j));
    assert.match(j.error.message, /MAX_REQUEST_MB/);
  });

  it("a user's job storage over USER_QUOTA_MB answers 413; outputs count until they are swept; other users go on", async () => {
    const user = await makeUser(s, 'quota-user');
    const other = await makeUser(s, 'quota-other');
    // Noise does not compress: a 520 px PNG is about 0.8 MB in and out; three outputs hold 2.4 MB.
    const run = (token: string) =>
      form({ file: new File([noise], 'noise.png'), settings: '{"width": 520}' }).then((f) =>
        api(s, token, 'POST', '/api/v1/tools/image/resize', f),
      );
    const noise = await (await noisePng(520)).arrayBuffer();
    const first = await run(user.token);
    assert.equal(first.status, 200, first.text);
    assert.ok(first.body.processedSize > 700_000, `output ${first.body.processedSize} B`);
    for (let i = 0; i < 2; i++) assert.equal((await run(user.token)).status, 200);
    expect413(await run(user.token), /3 MB \(USER_QUOTA_MB\)/);
    assert.equal((await run(other.token)).status, 200);
    // Once the first job's files are gone (its row swept), the user may run again.
    await s.app.kiln.store.db.deleteFrom('jobs').where('id', '=', first.body.jobId).execute();
    assert.equal((await run(user.token)).status, 200);
  });
});

/**
 * Opens a raw connection, writes `head` (then `drip.chunk` every `drip.everyMs`), and resolves with how
 * long the server kept it open and what it answered; rejects when it is still open after `maxMs`.
 */
function holdOpen(
  url: string,
  head: string,
  maxMs: number,
  drip?: { chunk: string; everyMs: number },
): Promise<{ closedAfterMs: number; answer: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    let answer = '';
    const sock = net.connect(Number(port), hostname, () => sock.write(head));
    const tick = drip && setInterval(() => sock.destroyed || sock.write(drip.chunk), drip.everyMs);
    sock.on('data', (d) => (answer += d.toString()));
    sock.on('error', () => {});
    sock.on('close', () => {
      clearInterval(tick);
      clearTimeout(timer);
      resolve({ closedAfterMs: Date.now() - t0, answer });
    });
    const timer = setTimeout(() => {
      clearInterval(tick);
      sock.destroy();
      reject(new Error(`the server kept the connection open for ${maxMs} ms; it answered: ${answer.slice(0, 80)}`));
    }, maxMs);
  });
}

describe('slow clients and bursts', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer({ env: { HEADERS_TIMEOUT_S: '1', BODY_IDLE_TIMEOUT_S: '1', RATE_LIMIT_PER_MINUTE: '30' } });
  });
  after(() => s.close());

  it('a body that stalls loses its connection, and its upload is removed', async () => {
    const head =
      'POST /api/v1/tools/image/resize HTTP/1.1\r\nHost: x\r\n' +
      `Authorization: Bearer ${s.token}\r\nContent-Type: multipart/form-data; boundary=XX\r\nContent-Length: 100000\r\n\r\n` +
      '--XX\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n' +
      'x'.repeat(1000);
    const r = await holdOpen(s.url, head, 8000);
    assert.ok(r.closedAfterMs < 4000, `closed after ${r.closedAfterMs} ms`);
    await new Promise((res) => setTimeout(res, 300));
    const jobs = path.join(s.dataDir, 'jobs');
    assert.deepEqual(existsSync(jobs) ? readdirSync(jobs) : [], [], 'no upload left behind');
  });

  it('headers that never end lose their connection', async () => {
    const r = await holdOpen(s.url, 'GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-Slow: 1\r\n', 8000);
    assert.ok(r.closedAfterMs < 4000, `closed after ${r.closedAfterMs} ms`);
  });

  it('a burst past RATE_LIMIT_PER_MINUTE answers 429 with Retry-After; health probes and other users go on', async () => {
    const other = await makeUser(s, 'calm-user');
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 40; i++) {
      const res = await fetch(`${s.url}/api/auth/session`, { headers: { authorization: `Bearer ${s.token}` } });
      statuses.push(res.status);
      if (res.status === 429) {
        retryAfter = res.headers.get('retry-after');
        const body = (await res.json()) as { error: { code: string; message: string } };
        assert.equal(body.error.code, 'RATE_LIMITED');
        assert.match(body.error.message, /RATE_LIMIT_PER_MINUTE/);
      } else await res.arrayBuffer();
    }
    assert.ok(statuses.filter((x) => x === 200).length >= 25, statuses.join(','));
    assert.ok(statuses.includes(429), statuses.join(','));
    assert.ok(Number(retryAfter) >= 1 && Number(retryAfter) <= 2, `Retry-After ${retryAfter}`);
    for (let i = 0; i < 40; i++) assert.equal((await fetch(`${s.url}/api/v1/health`)).status, 200);
    assert.equal((await api(s, other.token, 'GET', '/api/auth/session')).status, 200);
    // Anonymous callers are counted per address.
    const anon: number[] = [];
    for (let i = 0; i < 40; i++) anon.push((await fetch(`${s.url}/api/v1/config/auth`)).status);
    assert.ok(anon.includes(429), anon.join(','));
  });
});

describe('limits per caller with AUTH_ENABLED=false', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer({ env: { AUTH_ENABLED: 'false', RATE_LIMIT_PER_MINUTE: '30' } });
  });
  after(() => s.close());

  // Every caller is the same (admin) user here: counted by user, one client's flood locked out the rest.
  it('the rate is counted per client address, not for the one open user', async () => {
    const from = async (remoteAddress: string) =>
      (await s.app.inject({ method: 'GET', url: '/api/auth/session', remoteAddress })).statusCode;
    const flood: number[] = [];
    for (let i = 0; i < 40; i++) flood.push(await from('10.1.2.3'));
    assert.ok(flood.includes(429), flood.join(','));
    assert.equal(await from('10.9.8.7'), 200);
    // An IPv6 client is one network (/64), whatever address of it a request comes from.
    const v6: number[] = [];
    for (let i = 0; i < 40; i++) v6.push(await from(`2001:db8:1:2::${(i + 1).toString(16)}`));
    assert.ok(v6.includes(429), v6.join(','));
  });
});

describe('bodies that trickle', () => {
  let s: TestServer;
  before(async () => {
    // The idle limit is far away: only the rate and the linger can close these connections.
    s = await startServer({ env: { BODY_IDLE_TIMEOUT_S: '60', MIN_BODY_RATE_BPS: '100', BODY_RATE_WINDOW_S: '1' } });
  });
  after(() => s.close());

  it('a body sent a few bytes a second is cut off, on a public route too', async () => {
    const head =
      'POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"username":"';
    // 5 bytes a second: never idle for BODY_IDLE_TIMEOUT_S, far below MIN_BODY_RATE_BPS.
    const r = await holdOpen(s.url, head, 15_000, { chunk: 'a', everyMs: 200 });
    assert.ok(r.closedAfterMs < 5000, `closed after ${r.closedAfterMs} ms`);
  });

  it('a slow body above the minimum rate arrives whole and is answered', async () => {
    const body = JSON.stringify({ username: 'nobody-here', password: 'x'.repeat(900) });
    const head = `POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`;
    const { hostname, port } = new URL(s.url);
    // ~300 bytes a second for about three seconds (three rate windows).
    const answer = await new Promise<string>((resolve, reject) => {
      let got = '';
      let at = 0;
      const sock = net.connect(Number(port), hostname, () => sock.write(head));
      const tick = setInterval(() => {
        sock.write(body.slice(at, at + 60));
        at += 60;
        if (at >= body.length) clearInterval(tick);
      }, 200);
      sock.on('data', (d) => (got += d.toString()));
      sock.on('error', reject);
      sock.on('close', () => {
        clearInterval(tick);
        resolve(got);
      });
    });
    assert.match(answer, /^HTTP\/1\.1 401 /, answer.slice(0, 200));
    assert.match(answer, /UNAUTHORIZED/);
  });

  it('a body still coming after an early answer is read only for a while, then the connection closes', async () => {
    // No credentials: 401 before the upload is read. The client goes on sending (fast enough for the
    // rate) a body it declared 10 MB: node reads and drops it, but not for ever.
    const head =
      'POST /api/v1/tools/image/resize HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=XX\r\nContent-Length: 10000000\r\n\r\n--XX\r\n';
    const r = await holdOpen(s.url, head, 20_000, { chunk: 'x'.repeat(100), everyMs: 100 });
    assert.match(r.answer, /^HTTP\/1\.1 401 /, r.answer.slice(0, 200));
    assert.ok(r.closedAfterMs >= 4000 && r.closedAfterMs < 9000, `closed after ${r.closedAfterMs} ms`);
  });
});
