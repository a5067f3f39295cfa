/**
 * Issue #21 item 5: with AUTH_ENABLED=false, DNS rebinding (a foreign Host) and cross-site requests (a
 * foreign Origin) are refused with 403 FORBIDDEN before they act; same-origin requests, requests
 * without Origin (CLI, curl) and the docs pages still work; PUBLIC_HOSTS names are accepted.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { startServer, type TestServer } from '../helpers/server.js';

interface Answer {
  status: number;
  body: any;
  text: string;
}

/** node:http rather than fetch: fetch does not let a caller choose the Host header. */
function raw(url: string, method: string, p: string, headers: Record<string, string>, body?: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      new URL(p, url),
      { method, headers: { ...headers, ...(body ? { 'content-length': body.length } : {}) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () => {
          let json: any;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, body: json, text });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function logoForm(): Promise<{ body: Buffer; type: string }> {
  const png = await sharp({ create: { width: 4, height: 4, channels: 3, background: '#f00' } })
    .png()
    .toBuffer();
  const f = new FormData();
  f.append('file', new File([new Uint8Array(png)], 'logo.png', { type: 'image/png' }));
  const r = new Response(f);
  return { body: Buffer.from(await r.arrayBuffer()), type: r.headers.get('content-type')! };
}

function forbidden(r: Answer, reason: string): void {
  assert.equal(r.status, 403, r.text);
  assert.equal(r.body?.error?.code, 'FORBIDDEN');
  assert.equal(r.body?.error?.reason, reason);
}

describe('host allow-list and Origin check with auth disabled', () => {
  let s: TestServer;
  let host: string;
  before(async () => {
    s = await startServer({ env: { AUTH_ENABLED: 'false', PUBLIC_HOSTS: 'kiln.example.com' } });
    host = new URL(s.url).host;
  });
  after(() => s.close());

  it('a rebinding Host cannot create an API key nor read anything', async () => {
    const json = { 'content-type': 'application/json' };
    forbidden(
      await raw(s.url, 'POST', '/api/v1/api-keys', { ...json, host: 'rebind.attacker.example' }, Buffer.from('{"name":"x"}')),
      'host-not-allowed',
    );
    forbidden(await raw(s.url, 'GET', '/api/v1/health', { host: 'rebind.attacker.example:1349' }), 'host-not-allowed');
    forbidden(await raw(s.url, 'GET', '/api/v1/api-keys', { host: 'localhost.attacker.example' }), 'host-not-allowed');
    // Nothing was created: the key list (asked for by a right name) is empty.
    const keys = await raw(s.url, 'GET', '/api/v1/api-keys', { host });
    assert.equal(keys.status, 200, keys.text);
    assert.deepEqual(keys.body.keys ?? keys.body, []);
  });

  it('loopback names, IP literals and PUBLIC_HOSTS are served, docs pages too', async () => {
    const port = new URL(s.url).port;
    for (const h of [host, `localhost:${port}`, `app.localhost:${port}`, `[::1]:${port}`, 'kiln.example.com', 'KILN.example.com:443']) {
      const r = await raw(s.url, 'GET', '/api/v1/health', { host: h });
      assert.equal(r.status, 200, `${h}: ${r.text}`);
    }
    const docs = await raw(s.url, 'GET', '/api/docs/', { host: `localhost:${port}` });
    assert.equal(docs.status, 200, docs.text.slice(0, 200));
    assert.match(docs.text, /<html/i);
  });

  it('a cross-site multipart POST cannot change the branding logo; same-origin and Origin-less ones can', async () => {
    const { body, type } = await logoForm();
    const headers = { host, 'content-type': type };
    forbidden(await raw(s.url, 'POST', '/api/v1/branding/logo', { ...headers, origin: 'https://attacker.example' }, body), 'cross-origin');
    forbidden(await raw(s.url, 'POST', '/api/v1/branding/logo', { ...headers, origin: 'null' }, body), 'cross-origin');
    // Another port of the same machine is another site.
    forbidden(await raw(s.url, 'POST', '/api/v1/branding/logo', { ...headers, origin: 'http://127.0.0.1:1' }, body), 'cross-origin');
    assert.equal((await raw(s.url, 'GET', '/api/v1/branding/logo', { host })).status, 404, 'no logo was stored');

    const same = await raw(s.url, 'POST', '/api/v1/branding/logo', { ...headers, origin: `http://${host}` }, body);
    assert.equal(same.status, 201, same.text);
    const proxied = await raw(s.url, 'DELETE', '/api/v1/branding/logo', { host, origin: 'https://kiln.example.com' });
    assert.equal(proxied.status, 200, proxied.text);
    const cli = await raw(s.url, 'POST', '/api/v1/branding/logo', headers, body);
    assert.equal(cli.status, 201, cli.text);
    // A cross-site GET is not state-changing (the browser keeps the answer from the page anyway).
    assert.equal((await raw(s.url, 'GET', '/api/v1/branding', { host, origin: 'https://attacker.example' })).status, 200);
  });
});

describe('host allow-list with auth enabled', () => {
  it('is off until PUBLIC_HOSTS is set, then refuses other names', async () => {
    const open = await startServer();
    try {
      const r = await raw(open.url, 'GET', '/api/v1/health', { host: 'anything.example' });
      assert.equal(r.status, 200, r.text);
    } finally {
      await open.close();
    }
    const named = await startServer({ env: { PUBLIC_HOSTS: 'kiln.example.com,files.example.org' } });
    try {
      forbidden(await raw(named.url, 'GET', '/api/v1/health', { host: 'anything.example' }), 'host-not-allowed');
      assert.equal((await raw(named.url, 'GET', '/api/v1/health', { host: 'files.example.org' })).status, 200);
      const login = await raw(
        named.url,
        'POST',
        '/api/auth/login',
        { host: 'kiln.example.com', origin: 'https://attacker.example', 'content-type': 'application/json' },
        Buffer.from(JSON.stringify({ username: 'admin', password: named.adminPassword })),
      );
      forbidden(login, 'cross-origin');
    } finally {
      await named.close();
    }
  });
});
