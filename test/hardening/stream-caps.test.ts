/**
 * Event streams open at once are capped per user (MAX_STREAMS_PER_USER): the stream past the cap is
 * answered 429 in the one error shape with Retry-After, other users are not affected, a stream that
 * ends gives its place back, and MCP session streams count the same; /metrics counts the refusals.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { filePart, form, heldJob, mcpInitialize, startServer, type TestServer } from '../helpers/server.js';
import { makeUser } from '../daemon/accounts/http.js';

const dir = tempDir();

interface Open {
  status: number;
  headers: Headers;
  /** The first bytes of a 200 stream, or the error body. */
  text: string;
  close(): void;
}

/** Opens a GET and reads its first chunk; the stream stays open until close(). */
async function open(url: string, token: string, headers: Record<string, string> = {}): Promise<Open> {
  const ac = new AbortController();
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}`, ...headers }, signal: ac.signal });
  if (res.status !== 200) return { status: res.status, headers: res.headers, text: await res.text(), close: () => ac.abort() };
  const reader = res.body!.getReader();
  const first = await reader.read();
  return {
    status: 200,
    headers: res.headers,
    text: new TextDecoder().decode(first.value),
    close: () => ac.abort(),
  };
}

/** Waits until the server counts `n` open streams (a closed one is counted off when its socket closes). */
async function streamsOpen(s: TestServer, n: number): Promise<void> {
  for (let i = 0; i < 500 && s.app.kiln.streams.stats().open !== n; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(s.app.kiln.streams.stats().open, n);
}

describe('event stream caps', () => {
  let s: TestServer;
  let image: string;
  before(async () => {
    s = await startServer({ env: { MAX_STREAMS_PER_USER: '2', JOB_CONCURRENCY: '1', SYNC_WAIT_MS: '0' } });
    image = await makeImage(dir, 'in.png', 64, 48);
  });
  after(() => s.close());

  it('answers the stream past MAX_STREAMS_PER_USER 429 with Retry-After, per user, and frees a place on close', async () => {
    const held = await heldJob(s, image);
    const other = await makeUser(s, 'streamer');
    const queued = await fetch(`${s.url}/api/v1/tools/image/resize`, {
      method: 'POST',
      headers: { authorization: `Bearer ${other.token}` },
      body: await form({ file: await filePart(image), settings: JSON.stringify({ width: 20 }) }),
    });
    assert.equal(queued.status, 202);
    const otherJob = ((await queued.json()) as { jobId: string }).jobId;
    const progress = (id: string) => `${s.url}/api/v1/jobs/${id}/progress`;
    const streams: Open[] = [];
    try {
      streams.push(await open(progress(held.jobId), s.token), await open(progress(held.jobId), s.token));
      for (const st of streams) assert.equal(st.status, 200);
      await streamsOpen(s, 2);

      const refused = await open(progress(held.jobId), s.token);
      assert.equal(refused.status, 429);
      assert.equal(refused.headers.get('retry-after'), '5');
      const body = JSON.parse(refused.text) as { error: { code: string; reason: string; message: string } };
      assert.equal(body.error.code, 'RATE_LIMITED');
      assert.equal(body.error.reason, 'streams');
      assert.match(body.error.message, /at most 2/);
      // HEAD holds nothing and is still answered.
      const head = await fetch(progress(held.jobId), { method: 'HEAD', headers: { authorization: `Bearer ${s.token}` } });
      assert.equal(head.status, 200);

      // Another user has places of their own.
      const theirs = await open(progress(otherJob), other.token);
      streams.push(theirs);
      assert.equal(theirs.status, 200);
      assert.match(theirs.text, /retry: 3000/);
      await streamsOpen(s, 3);

      // One of the admin's streams ends: a new one is served.
      streams[0]!.close();
      await streamsOpen(s, 2);
      const again = await open(progress(held.jobId), s.token);
      streams.push(again);
      assert.equal(again.status, 200);
      await streamsOpen(s, 3);

      // An MCP session stream takes a place too: the admin is at the cap again.
      const init = await mcpInitialize(s.url, s.token);
      assert.equal(init.status, 200);
      await init.text();
      const sid = init.headers.get('mcp-session-id')!;
      const mcp = await open(`${s.url}/api/v1/mcp`, s.token, {
        'mcp-session-id': sid,
        accept: 'text/event-stream',
        'mcp-protocol-version': '2025-06-18',
      });
      streams.push(mcp);
      assert.equal(mcp.status, 429);
      assert.equal(JSON.parse(mcp.text).error.reason, 'streams');

      const metrics = await (await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${s.token}` } })).text();
      assert.match(metrics, /^kiln_http_streams_refused_total 2$/m);
      assert.match(metrics, /^kiln_http_streams 3$/m);
    } finally {
      for (const st of streams) st.close();
      await held.release();
    }
    await streamsOpen(s, 0);
  });
});

describe('MCP sessions per user', () => {
  let s: TestServer;
  before(async () => {
    process.env.KILN_MCP_MAX_SESSIONS = '2';
    s = await startServer();
  });
  after(async () => {
    delete process.env.KILN_MCP_MAX_SESSIONS;
    await s.close();
  });

  const headers = (token: string, sid?: string): Record<string, string> => ({
    authorization: `Bearer ${token}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...(sid ? { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' } : {}),
  });
  const initialize = async (token: string) => {
    const r = await mcpInitialize(s.url, token);
    const text = await r.text();
    return { status: r.status, sid: r.headers.get('mcp-session-id') ?? '', text, retryAfter: r.headers.get('retry-after') };
  };
  const ping = async (token: string, sid: string) => {
    const r = await fetch(`${s.url}/api/v1/mcp`, {
      method: 'POST',
      headers: headers(token, sid),
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }),
    });
    await r.text();
    return r.status;
  };

  it('a session past KILN_MCP_MAX_SESSIONS replaces the least recently used idle one; with all busy it is refused 429', async () => {
    const a = await initialize(s.token);
    const b = await initialize(s.token);
    assert.equal(a.status, 200);
    assert.equal(b.status, 200);
    assert.equal(await ping(s.token, a.sid), 200, 'a is now the most recently used');
    const c = await initialize(s.token);
    assert.equal(c.status, 200);
    assert.equal(await ping(s.token, b.sid), 404, 'b, the least recently used, was closed');
    assert.equal(await ping(s.token, a.sid), 200);
    assert.equal(await ping(s.token, c.sid), 200);
    // Another user's sessions are theirs alone.
    const other = await makeUser(s, 'mcp-other');
    assert.equal((await initialize(other.token)).status, 200);

    // Both sessions busy (their event streams open): no idle one to replace.
    const streams = await Promise.all(
      [a.sid, c.sid].map((sid) => open(`${s.url}/api/v1/mcp`, s.token, { ...headers(s.token, sid), accept: 'text/event-stream' })),
    );
    try {
      for (const st of streams) assert.equal(st.status, 200);
      const d = await initialize(s.token);
      assert.equal(d.status, 429, d.text);
      assert.equal(d.retryAfter, '5');
      assert.equal(JSON.parse(d.text).error.reason, 'mcp-sessions');
    } finally {
      for (const st of streams) st.close();
    }
  });
});
