/**
 * HTTP edge cases a sloppy or hostile client hits, over raw node:http requests: wrong methods (405 with
 * Allow, not 404), OPTIONS, conditional downloads (ETag, If-None-Match, If-Range) and repeated form fields.
 */
import assert from 'node:assert/strict';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

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
  let _png: string;
  before(async () => {
    s = await startServer();
    _png = await makeImage(dir, 'tiny.png', 8, 6);
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
});
