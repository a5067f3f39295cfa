/**
 * Open connections are capped in all (MAX_CONNECTIONS) and per client address (MAX_CONNECTIONS_PER_ADDRESS):
 * the connection past a cap is answered 429 or 503 in the one error shape before anything it sends is
 * read, and closed; one that closes gives its place back; proxies named in TRUST_PROXY are exempt.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { proxyList } from '../../daemon/http/connection-caps.js';
import { startServer, type TestServer } from '../helpers/server.js';

/** A raw connection to the server, open once connected; what it received by the time it closed. */
function connect(url: string): Promise<{ socket: net.Socket; closed: Promise<string> }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    let got = '';
    socket.on('data', (b) => (got += b.toString('latin1')));
    const closed = new Promise<string>((r) => socket.on('close', () => r(got)));
    socket.on('error', () => {});
    socket.once('connect', () => resolve({ socket, closed }));
    socket.once('error', reject);
  });
}

/** Waits until the server counts `n` open connections (its count follows the sockets' events). */
async function openCount(s: TestServer, n: number): Promise<void> {
  // Up to 10 s: a keep-alive connection of an earlier fetch lingers until the client lets it go.
  for (let i = 0; i < 1000 && s.app.kiln.connections().open !== n; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(s.app.kiln.connections().open, n);
}

/** GET on a connection of its own, closed after the answer. */
function getOnce(url: string, token: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false, headers: { authorization: `Bearer ${token}`, connection: 'close' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
  });
}

function answer(raw: string): { status: number; body: { error: { code: string; reason?: string } } } {
  const [head, body] = raw.split('\r\n\r\n', 2) as [string, string];
  assert.match(head, /\r\nconnection: close/i);
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), body: JSON.parse(body) };
}

describe('connection caps', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer({ env: { MAX_CONNECTIONS_PER_ADDRESS: '3' } });
  });
  after(() => s.close());

  it('answers the connection past MAX_CONNECTIONS_PER_ADDRESS 429 without reading its request, and frees the place on close', async () => {
    // The log-in of startServer may still hold a keep-alive connection (from this address too).
    const base = s.app.kiln.connections().open;
    const held = await Promise.all(Array.from({ length: 3 - base }, () => connect(s.url)));
    await openCount(s, 3);
    const extra = await connect(s.url);
    // A request it sends is never run: the answer is the refusal, then the connection ends.
    extra.socket.write(`GET /api/v1/jobs HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${s.token}\r\n\r\n`);
    const refused = answer(await extra.closed);
    assert.equal(refused.status, 429);
    assert.equal(refused.body.error.code, 'RATE_LIMITED');
    assert.equal(refused.body.error.reason, 'connections');
    assert.equal(s.app.kiln.connections().refused.address, 1);
    // One closes: a new connection is served.
    held[0]!.socket.destroy();
    await openCount(s, 2);
    assert.equal((await getOnce(`${s.url}/api/v1/jobs`, s.token)).status, 200);
    for (const h of held) h.socket.destroy();
    await openCount(s, base);
    const metrics = (await getOnce(`${s.url}/metrics`, s.token)).text;
    assert.match(metrics, /^kiln_http_connections_refused_total\{cap="address"\} 1$/m);
    assert.match(metrics, new RegExp(`^kiln_http_connections ${base + 1}$`, 'm'), 'the scrape itself counts');
  });
});

describe('connection caps: the whole server, and proxies', () => {
  let s: TestServer;
  before(async () => {
    // The test connects from 127.0.0.1, named as the proxy: the per-address cap does not apply to it.
    s = await startServer({ env: { MAX_CONNECTIONS: '4', MAX_CONNECTIONS_PER_ADDRESS: '2', TRUST_PROXY: 'loopback' } });
  });
  after(() => s.close());

  it('answers the connection past MAX_CONNECTIONS 503; a trusted proxy address is not capped on its own', async () => {
    const base = s.app.kiln.connections().open;
    const held = await Promise.all(Array.from({ length: 4 - base }, () => connect(s.url)));
    await openCount(s, 4);
    const extra = await connect(s.url);
    const refused = answer(await extra.closed);
    assert.equal(refused.status, 503);
    assert.equal(refused.body.error.code, 'UNAVAILABLE');
    assert.deepEqual(s.app.kiln.connections().refused, { server: 1, address: 0 });
    for (const h of held) h.socket.destroy();
    await openCount(s, base);
  });

  it('reads TRUST_PROXY lists: addresses, CIDRs and the named ranges', () => {
    const list = proxyList('10.1.2.3, 192.168.0.0/16, loopback, fd00::/8')!;
    assert.equal(list.check('10.1.2.3', 'ipv4'), true);
    assert.equal(list.check('10.1.2.4', 'ipv4'), false);
    assert.equal(list.check('192.168.44.5', 'ipv4'), true);
    assert.equal(list.check('127.0.0.9', 'ipv4'), true);
    assert.equal(list.check('::1', 'ipv6'), true);
    assert.equal(list.check('fd12::1', 'ipv6'), true);
    assert.equal(list.check('2001:db8::1', 'ipv6'), false);
    assert.equal(proxyList(true), undefined);
    assert.equal(proxyList(2), undefined);
  });
});
