/**
 * Compressed answers over real HTTP (node:http, so the wire bytes are seen as sent): the OpenAPI
 * document and JSON answers in br or gzip as Accept-Encoding asks, with Vary; images, small answers
 * and clients that ask for nothing are sent as they are.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import zlib from 'node:zlib';
import { pickEncoding } from '../../daemon/http/compress.js';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { filePart, form, startServer, type TestServer } from '../helpers/server.js';

const dir = tempDir();

function get(url: string, headers: Record<string, string>): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

describe('response compression', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(() => s.close());

  it('picks br or gzip from Accept-Encoding, honouring q-values and *', () => {
    assert.equal(pickEncoding(undefined), undefined);
    assert.equal(pickEncoding('identity'), undefined);
    assert.equal(pickEncoding('gzip, deflate, br'), 'br');
    assert.equal(pickEncoding('gzip, br;q=0'), 'gzip');
    assert.equal(pickEncoding('br;q=0.5, gzip;q=0.8'), 'gzip');
    assert.equal(pickEncoding('*'), 'br');
    assert.equal(pickEncoding('*;q=0'), undefined);
    assert.equal(pickEncoding('GZIP'), 'gzip');
  });

  it('sends the OpenAPI document in br or gzip, the same bytes once decoded, with Vary', async () => {
    const url = `${s.url}/api/v1/openapi.yaml`;
    const plain = await get(url, {});
    assert.equal(plain.status, 200);
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.match(String(plain.headers.vary), /accept-encoding/i);
    assert.ok(plain.body.length > 500_000, `the document is large (${plain.body.length} bytes)`);

    const br = await get(url, { 'accept-encoding': 'gzip, deflate, br' });
    assert.equal(br.headers['content-encoding'], 'br');
    assert.match(String(br.headers.vary), /accept-encoding/i);
    assert.ok(br.body.length < plain.body.length / 10, `br: ${br.body.length} of ${plain.body.length} bytes`);
    assert.deepEqual(zlib.brotliDecompressSync(br.body), plain.body);

    const gz = await get(url, { 'accept-encoding': 'gzip' });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.deepEqual(zlib.gunzipSync(gz.body), plain.body);
  });

  it('compresses large JSON answers, not small ones', async () => {
    const auth = { authorization: `Bearer ${s.token}` };
    const big = await get(`${s.url}/api/v1/tools`, { ...auth, 'accept-encoding': 'gzip' });
    assert.equal(big.status, 200);
    assert.equal(big.headers['content-encoding'], 'gzip');
    assert.ok(Array.isArray(JSON.parse(zlib.gunzipSync(big.body).toString()).tools));
    const small = await get(`${s.url}/api/v1/health`, { 'accept-encoding': 'gzip, br' });
    assert.equal(small.status, 200);
    assert.equal(small.headers['content-encoding'], undefined);
    assert.equal(JSON.parse(small.body.toString()).status, 'healthy');
  });

  it('sends images as they are', async () => {
    const jpg = await makeImage(dir, 'c.jpg', 300, 200);
    const res = await fetch(`${s.url}/api/v1/tools/image/resize`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.token}` },
      body: await form({ file: await filePart(jpg), settings: '{"width": 200}' }),
    });
    const { downloadUrl, processedSize } = (await res.json()) as { downloadUrl: string; processedSize: number };
    const dl = await get(s.url + downloadUrl, { authorization: `Bearer ${s.token}`, 'accept-encoding': 'gzip, br' });
    assert.equal(dl.status, 200);
    assert.equal(dl.headers['content-encoding'], undefined);
    assert.equal(dl.body.length, processedSize);
    assert.deepEqual([...dl.body.subarray(0, 3)], [0xff, 0xd8, 0xff]);
  });
});
