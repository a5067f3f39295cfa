/**
 * Conditional library downloads: the ETag is the content's sha256, so a client that sends it back in
 * If-None-Match holds those exact bytes and gets 304 without them; a new version (another ETag) is sent.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { tempDir } from '../../helpers/fixtures.js';
import { api, filePart, form, startServer, type TestServer } from '../../helpers/server.js';

const dir = tempDir();

describe('library downloads with If-None-Match', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(() => s.close());

  it('answers 304 for the ETag the client holds, and the new content once a version is added', async () => {
    const a = path.join(dir, 'cached-a.bin');
    const b = path.join(dir, 'cached-b.bin');
    await writeFile(a, randomBytes(3000));
    await writeFile(b, randomBytes(4000));
    const up = await api(s, s.token, 'POST', '/api/v1/files', await form({ file: await filePart(a) }));
    assert.equal(up.status, 201, up.text);
    const id = up.body.id as string;
    const get = (p: string, inm: string) =>
      fetch(`${s.url}${p}`, { headers: { authorization: `Bearer ${s.token}`, 'if-none-match': inm } });
    const tag = `"${up.body.versions[0].sha256}"`;
    for (const p of [`/api/v1/files/${id}/download`, `/api/v1/files/${id}/versions/1/download`]) {
      for (const inm of [tag, `W/${tag}`, `"other", ${tag}`, '*']) {
        const r = await get(p, inm);
        assert.equal(r.status, 304, `${p} ${inm}`);
        assert.equal(r.headers.get('etag'), tag);
        assert.equal((await r.arrayBuffer()).byteLength, 0);
      }
      const other = await get(p, '"something-else"');
      assert.equal(other.status, 200);
      assert.equal((await other.arrayBuffer()).byteLength, 3000);
    }
    const v2 = await api(s, s.token, 'POST', `/api/v1/files/${id}/versions`, await form({ file: await filePart(b) }));
    assert.equal(v2.status, 201, v2.text);
    const fresh = await get(`/api/v1/files/${id}/download`, tag);
    assert.equal(fresh.status, 200);
    assert.equal(fresh.headers.get('etag'), `"${v2.body.version.sha256}"`);
    assert.equal((await fresh.arrayBuffer()).byteLength, 4000);
    await api(s, s.token, 'DELETE', `/api/v1/files/${id}`);
  });
});
