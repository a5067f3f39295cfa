/**
 * Library edges met in the second QA pass: a version number is never given twice (also after the
 * newest was deleted), and the list's name filter is case-insensitive for names beyond ASCII.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { makeImage, tempDir } from '../../helpers/fixtures.js';
import { migrationDb } from '../../helpers/migration-db.js';
import { api, filePart, form, startServer, type TestServer } from '../../helpers/server.js';

const dir = tempDir('kiln-libedge-');

describe('library versions and names', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(() => s.close());

  const upload = async (file: string, name?: string) =>
    api(s, s.token, 'POST', '/api/v1/files', await form({ file: await filePart(file), ...(name ? { name } : {}) }));

  it('never gives a deleted version number to a new version', async () => {
    // Three sizes: three distinct contents.
    const a = await makeImage(dir, 'a.png', 20, 10, { format: 'png' });
    const b = await makeImage(dir, 'b.png', 22, 10, { format: 'png' });
    const c = await makeImage(dir, 'c.png', 24, 10, { format: 'png' });
    const up = await upload(a);
    assert.equal(up.status, 201, up.text);
    const id = up.body.id as string;
    const v2 = await api(s, s.token, 'POST', `/api/v1/files/${id}/versions`, await form({ file: await filePart(b) }));
    assert.equal(v2.body.version.version, 2, v2.text);
    const del = await api(s, s.token, 'DELETE', `/api/v1/files/${id}/versions/2`);
    assert.equal(del.status, 200, del.text);
    assert.equal(del.body.latestVersion, 1);
    // Version 2 was b; a new version must not take its number, or a link to "version 2" silently
    // gives other content (and the history reads as if nothing had been deleted).
    const v3 = await api(s, s.token, 'POST', `/api/v1/files/${id}/versions`, await form({ file: await filePart(c) }));
    assert.equal(v3.status, 201, v3.text);
    assert.equal(v3.body.version.version, 3);
    const restored = await api(s, s.token, 'POST', `/api/v1/files/${id}/versions/1/restore`);
    assert.equal(restored.body.version.version, 4, restored.text);
    const list = await api(s, s.token, 'GET', `/api/v1/files/${id}/versions`);
    assert.deepEqual(
      list.body.versions.map((v: { version: number }) => v.version),
      [4, 3, 1],
    );
  });

  it('matches names beyond ASCII case-insensitively', async () => {
    const png = await makeImage(dir, 'u.png', 8, 8, { format: 'png' });
    const up = await upload(png, 'Ärger Über Café.png');
    assert.equal(up.status, 201, up.text);
    for (const q of ['Ärger', 'ärger', 'ÜBER', 'CAFÉ', 'café']) {
      const r = await api(s, s.token, 'GET', `/api/v1/files?name=${encodeURIComponent(q)}`);
      assert.deepEqual(
        r.body.items.map((i: { id: string }) => i.id),
        [up.body.id],
        `name=${q}`,
      );
    }
  });

  it('refuses a repeated or unknown text field of an upload, keeping nothing', async () => {
    const png = await makeImage(dir, 'fields.png', 9, 9, { format: 'png' });
    const before = (await api(s, s.token, 'GET', '/api/v1/files')).body.total;
    const blobs = async () => {
      let n = 0;
      for await (const _ of s.app.kiln.storage.list('library/blobs/')) n++;
      return n;
    };
    const blobsBefore = await blobs();
    // Two scopes have no one meaning: the last one won, sharing a file its owner may have meant to keep private.
    const twice = await api(s, s.token, 'POST', '/api/v1/files', await form({ file: await filePart(png), scope: ['private', 'team'] }));
    assert.equal(twice.status, 400, twice.text);
    assert.equal(twice.body.error.code, 'VALIDATION_ERROR');
    assert.match(twice.body.error.message, /scope/);
    // A misspelt field was dropped without a word (the item then kept the uploaded file's name).
    const typo = await api(s, s.token, 'POST', '/api/v1/files', await form({ file: await filePart(png), nmae: 'report.png' }));
    assert.equal(typo.status, 400, typo.text);
    assert.match(typo.body.error.message, /nmae/);
    const item = await upload(png);
    assert.equal(item.status, 201, item.text);
    // A new version takes a name (the version's), not a scope (the item's, PATCH): refused, not ignored.
    const scoped = await api(
      s,
      s.token,
      'POST',
      `/api/v1/files/${item.body.id}/versions`,
      await form({ file: await filePart(png), scope: 'team' }),
    );
    assert.equal(scoped.status, 400, scoped.text);
    assert.match(scoped.body.error.message, /scope/);
    const named = await api(
      s,
      s.token,
      'POST',
      `/api/v1/files/${item.body.id}/versions`,
      await form({ file: await filePart(png), name: 'x.png' }),
    );
    assert.equal(named.status, 201, named.text);
    assert.equal(named.body.version.name, 'x.png');
    assert.equal((await api(s, s.token, 'GET', '/api/v1/files')).body.total, before + 1);
    assert.equal((await api(s, s.token, 'GET', `/api/v1/files/${item.body.id}/versions`)).body.versions.length, 2);
    assert.equal(await blobs(), blobsBefore + 1);
    assert.deepEqual(readdirSync(path.join(s.dataDir, 'library', 'tmp')), []);
  });

  it('filters by extension as the newest version downloads, jpg and jpeg alike', async () => {
    const png = await makeImage(dir, 'holiday.png', 12, 12, { format: 'png' });
    const item = await upload(png, 'holiday-ext.png');
    const jpeg = await upload(await makeImage(dir, 'scan.jpeg', 14, 14, { format: 'jpeg' }), 'scan-ext.jpeg');
    // Converted to JPEG: the item keeps its name, its newest version (and download) is holiday-ext.jpg.
    const run = await api(
      s,
      s.token,
      'POST',
      '/api/v1/tools/image/convert',
      await form({ fileId: item.body.id, settings: '{"format":"jpg"}' }),
    );
    assert.equal(run.body.savedFileId, item.body.id, run.text);
    const dl = await fetch(`${s.url}/api/v1/files/${item.body.id}/download`, { headers: { authorization: `Bearer ${s.token}` } });
    assert.match(dl.headers.get('content-disposition') ?? '', /holiday-ext\.jpg/);
    await dl.arrayBuffer();
    const names = async (type: string) =>
      (await api(s, s.token, 'GET', `/api/v1/files?name=-ext&type=${type}`)).body.items.map((i: { name: string }) => i.name).sort();
    assert.deepEqual(await names('jpg'), ['holiday-ext.png', 'scan-ext.jpeg']);
    assert.deepEqual(await names('JPEG'), ['holiday-ext.png', 'scan-ext.jpeg']);
    assert.deepEqual(await names('png'), []);
    assert.equal(jpeg.status, 201);
  });
});

it('migration 0760 starts each item from its highest surviving version number', async () => {
  const { db, to } = migrationDb();
  try {
    await to('0750_job_list_order');
    const now = Date.now();
    const item = { owner_id: 'u1', name: 'a.png', content_type: 'image/png', size: 1, created_at: now, updated_at: now };
    await db
      .insertInto('library_items')
      .values([
        { ...item, id: 'i1', latest_version: 3 },
        { ...item, id: 'i2', latest_version: 1 },
      ])
      .execute();
    const version = {
      blob_hash: 'h',
      name: 'a.png',
      size: 1,
      content_type: 'image/png',
      created_by: 'u1',
      created_at: now,
      source: 'upload',
    };
    // i1 holds versions 1 and 3 (2 was deleted): its next number is 4.
    await db
      .insertInto('library_versions')
      .values([
        { ...version, id: 'v1', item_id: 'i1', version: 1 },
        { ...version, id: 'v3', item_id: 'i1', version: 3 },
        { ...version, id: 'v4', item_id: 'i2', version: 1 },
      ])
      .execute();
    await to('0760_library_version_numbers');
    assert.deepEqual(await db.selectFrom('library_items').select(['id', 'top_version']).orderBy('id').execute(), [
      { id: 'i1', top_version: 3 },
      { id: 'i2', top_version: 1 },
    ]);
    await to('0750_job_list_order');
  } finally {
    await db.destroy();
  }
});
