/**
 * The file library over HTTP: versions, restore, content stored once per hash, ownership across two
 * users and an admin (404 for the other user), the quota, and fileId → savedFileId for 200 and 202 runs.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { createUser } from '../../../daemon/store/users.js';
import { makeImage, tempDir } from '../../helpers/fixtures.js';
import { api, filePart, form, login, readSse, startServer, type TestServer } from '../../helpers/server.js';

const dir = tempDir();
const auth = (t: string) => ({ authorization: `Bearer ${t}` });

async function upload(s: TestServer, token: string, file: string, name?: string) {
  return api(s, token, 'POST', '/api/v1/files', await form({ file: await filePart(file), ...(name ? { name } : {}) }));
}

async function bytes(s: TestServer, token: string, p: string): Promise<{ status: number; buf: Buffer; headers: Headers }> {
  const res = await fetch(s.url + p, { headers: auth(token) });
  return { status: res.status, buf: Buffer.from(await res.arrayBuffer()), headers: res.headers };
}

/** Stored contents, wherever the server keeps them (its data dir, or a bucket with KILN_TEST_S3). */
async function blobCount(s: TestServer): Promise<number> {
  let n = 0;
  for await (const _ of s.app.kiln.storage.list('library/blobs/')) n++;
  return n;
}

describe('file library', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(() => s.close());

  it('keeps versions: upload, run a tool on fileId, restore, delete a version, rename, delete', async () => {
    const png = await makeImage(dir, 'photo.png', 80, 40, { format: 'png' });
    const up = await upload(s, s.token, png);
    assert.equal(up.status, 201, up.text);
    const id = up.body.id as string;
    assert.equal(up.body.name, 'photo.png');
    assert.equal(up.body.contentType, 'image/png');
    assert.equal(up.body.versions.length, 1);
    assert.equal(up.body.versions[0].source, 'upload');

    const first = await bytes(s, s.token, `/api/v1/files/${id}/download`);
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('content-type'), 'image/png');
    assert.deepEqual(first.buf, await import('node:fs/promises').then((f) => f.readFile(png)));
    const part = await fetch(`${s.url}/api/v1/files/${id}/download`, { headers: { ...auth(s.token), range: 'bytes=0-3' } });
    assert.equal(part.status, 206);
    assert.deepEqual(Buffer.from(await part.arrayBuffer()), first.buf.subarray(0, 4));
    // A range outside the file: the error alone, without the file's name, ETag or version headers.
    const outside = await fetch(`${s.url}/api/v1/files/${id}/download`, {
      headers: { ...auth(s.token), range: `bytes=${first.buf.length}-` },
    });
    assert.equal(outside.status, 416);
    assert.equal(outside.headers.get('content-range'), `bytes */${first.buf.length}`);
    assert.deepEqual(
      ['content-disposition', 'etag', 'x-kiln-version'].map((h) => outside.headers.get(h)),
      [null, null, null],
    );
    assert.equal((await outside.json()).error.code, 'USAGE_ERROR');
    // A Range that is no valid byte range is ignored (RFC 9110 §14.2): the whole file, not 416.
    for (const range of ['items=0-1', 'bytes=5-2', 'bytes=abc', 'bytes=-']) {
      const ignored = await fetch(`${s.url}/api/v1/files/${id}/download`, { headers: { ...auth(s.token), range } });
      assert.equal(ignored.status, 200, range);
      assert.deepEqual(Buffer.from(await ignored.arrayBuffer()), first.buf, range);
    }

    // A tool run on the item saves its output as version 2 (200 answer carries savedFileId).
    const run = await api(
      s,
      s.token,
      'POST',
      '/api/v1/tools/image/resize',
      await form({ fileId: id, settings: JSON.stringify({ width: 20 }) }),
    );
    assert.equal(run.status, 200, run.text);
    assert.equal(run.body.savedFileId, id);
    const job = await api(s, s.token, 'GET', `/api/v1/jobs/${run.body.jobId}`);
    assert.equal(job.body.result.savedFileId, id);

    const got = await api(s, s.token, 'GET', `/api/v1/files/${id}`);
    assert.equal(got.body.latestVersion, 2);
    const v2 = got.body.versions[0];
    assert.equal(v2.version, 2);
    assert.equal(v2.source, 'tool');
    assert.equal(v2.tool, 'resize');
    assert.equal(v2.settings.width, 20);
    assert.equal(v2.createdBy, got.body.ownerId);
    assert.equal((await sharp((await bytes(s, s.token, `/api/v1/files/${id}/download`)).buf).metadata()).width, 20);
    assert.equal((await sharp((await bytes(s, s.token, `/api/v1/files/${id}/download?version=1`)).buf).metadata()).width, 80);
    assert.equal((await sharp((await bytes(s, s.token, `/api/v1/files/${id}/versions/1/download`)).buf).metadata()).width, 80);
    assert.equal(await blobCount(s), 2);

    // Restoring v1 makes a v3 holding the same content: no new blob.
    const restored = await api(s, s.token, 'POST', `/api/v1/files/${id}/versions/1/restore`);
    assert.equal(restored.status, 201, restored.text);
    assert.equal(restored.body.version.version, 3);
    assert.equal(restored.body.version.restoredFrom, 1);
    assert.equal(restored.body.version.sha256, up.body.versions[0].sha256);
    assert.equal(await blobCount(s), 2);
    assert.equal((await sharp((await bytes(s, s.token, `/api/v1/files/${id}/download`)).buf).metadata()).width, 80);

    // Deleting v2 frees its content; deleting v1 keeps the content v3 still holds.
    assert.equal((await api(s, s.token, 'DELETE', `/api/v1/files/${id}/versions/2`)).status, 200);
    assert.equal(await blobCount(s), 1);
    assert.equal((await api(s, s.token, 'DELETE', `/api/v1/files/${id}/versions/1`)).status, 200);
    assert.equal(await blobCount(s), 1);
    const only = await api(s, s.token, 'DELETE', `/api/v1/files/${id}/versions/3`);
    assert.equal(only.status, 409);
    assert.equal(only.body.error.code, 'CONFLICT');
    assert.equal((await api(s, s.token, 'GET', `/api/v1/files/${id}/download?version=2`)).status, 404);

    const renamed = await api(s, s.token, 'PATCH', `/api/v1/files/${id}`, { name: 'holiday.png' });
    assert.equal(renamed.body.name, 'holiday.png');
    assert.equal((await api(s, s.token, 'DELETE', `/api/v1/files/${id}`)).status, 200);
    assert.equal((await api(s, s.token, 'GET', `/api/v1/files/${id}`)).status, 404);
    assert.equal(await blobCount(s), 0);
  });

  it('stores identical content once and lists with paging and filters', async () => {
    const jpg = await makeImage(dir, 'same.jpg', 30, 30);
    const before = await blobCount(s);
    const a = await upload(s, s.token, jpg, 'alpha.jpg');
    const b = await upload(s, s.token, jpg, 'beta.jpg');
    assert.notEqual(a.body.id, b.body.id);
    assert.equal(await blobCount(s), before + 1);
    const txt = path.join(dir, 'notes.txt');
    await writeFile(txt, 'hello library\n');
    await upload(s, s.token, txt);

    const images = await api(s, s.token, 'GET', '/api/v1/files?type=image');
    assert.deepEqual(images.body.items.map((i: any) => i.name).sort(), ['alpha.jpg', 'beta.jpg']);
    const byName = await api(s, s.token, 'GET', '/api/v1/files?name=ALPH');
    assert.deepEqual(
      byName.body.items.map((i: any) => i.name),
      ['alpha.jpg'],
    );
    const byExt = await api(s, s.token, 'GET', '/api/v1/files?type=txt');
    assert.deepEqual(
      byExt.body.items.map((i: any) => i.name),
      ['notes.txt'],
    );
    // LIKE wildcards in the filter are taken literally.
    assert.deepEqual((await api(s, s.token, 'GET', '/api/v1/files?name=%25')).body.items, []);
    assert.deepEqual((await api(s, s.token, 'GET', '/api/v1/files?name=e_')).body.items, []);
    const p1 = await api(s, s.token, 'GET', '/api/v1/files?pageSize=2&page=1');
    const p2 = await api(s, s.token, 'GET', '/api/v1/files?pageSize=2&page=2');
    assert.equal(p1.body.total, 3);
    assert.equal(p1.body.items.length, 2);
    assert.equal(p2.body.items.length, 1);
    assert.equal(new Set([...p1.body.items, ...p2.body.items].map((i: any) => i.id)).size, 3);
    assert.equal((await api(s, s.token, 'GET', '/api/v1/files?page=0')).status, 400);

    // Deleting one of the two items keeps the shared content for the other.
    await api(s, s.token, 'DELETE', `/api/v1/files/${a.body.id}`);
    assert.equal((await bytes(s, s.token, `/api/v1/files/${b.body.id}/download`)).status, 200);
  });

  it('names version 1 and its download after the name given at upload, not the uploaded file', async () => {
    const jpg = await makeImage(dir, 'IMG_0042.jpg', 20, 20);
    const up = await upload(s, s.token, jpg, 'Holiday – beach.jpg');
    assert.equal(up.status, 201, up.text);
    assert.equal(up.body.name, 'Holiday – beach.jpg');
    assert.equal(up.body.versions[0].name, 'Holiday – beach.jpg');
    const got = await bytes(s, s.token, `/api/v1/files/${up.body.id}/download`);
    assert.equal(got.status, 200);
    assert.match(got.headers.get('content-disposition') ?? '', /filename\*=UTF-8''Holiday%20%E2%80%93%20beach\.jpg/);
    await api(s, s.token, 'DELETE', `/api/v1/files/${up.body.id}`);
  });

  it('a tool run on a renamed item names its output and the saved version after the new name', async () => {
    const up = await upload(s, s.token, await makeImage(dir, 'IMG_0043.png', 30, 20, { format: 'png' }));
    const id = up.body.id as string;
    assert.equal((await api(s, s.token, 'PATCH', `/api/v1/files/${id}`, { name: 'Ferien.png' })).status, 200);
    const run = await api(
      s,
      s.token,
      'POST',
      '/api/v1/tools/image/resize',
      await form({ fileId: id, settings: JSON.stringify({ width: 10 }) }),
    );
    assert.equal(run.status, 200, run.text);
    assert.equal(path.posix.basename(run.body.downloadUrl), 'Ferien.png');
    const got = await api(s, s.token, 'GET', `/api/v1/files/${id}`);
    assert.equal(got.body.versions[0].name, 'Ferien.png');
    assert.match((await bytes(s, s.token, `/api/v1/files/${id}/download`)).headers.get('content-disposition') ?? '', /Ferien\.png/);
    await api(s, s.token, 'DELETE', `/api/v1/files/${id}`);
  });

  it('downloads a renamed item under its new name, a version in another format with that format extension', async () => {
    const up = await upload(s, s.token, await makeImage(dir, 'IMG_0101.png', 12, 12, { format: 'png' }));
    const id = up.body.id as string;
    assert.equal((await api(s, s.token, 'PATCH', `/api/v1/files/${id}`, { name: 'Strand 2026.png' })).status, 200);
    for (const p of [`/api/v1/files/${id}/download`, `/api/v1/files/${id}/versions/1/download`, `/api/v1/files/${id}/download?version=1`]) {
      const cd = (await bytes(s, s.token, p)).headers.get('content-disposition') ?? '';
      assert.match(cd, /filename\*=UTF-8''Strand%202026\.png$/, p);
      assert.doesNotMatch(cd, /IMG_0101/, p);
    }
    // A converted version keeps its own format in the name: Strand 2026.webp, not .png.
    const webp = await makeImage(dir, 'IMG_0101-converted.webp', 12, 12, { format: 'webp' });
    assert.equal((await api(s, s.token, 'POST', `/api/v1/files/${id}/versions`, await form({ file: await filePart(webp) }))).status, 201);
    const v2 = await bytes(s, s.token, `/api/v1/files/${id}/download`);
    assert.equal((await sharp(v2.buf).metadata()).format, 'webp');
    assert.match(v2.headers.get('content-disposition') ?? '', /filename\*=UTF-8''Strand%202026\.webp$/);
    await api(s, s.token, 'DELETE', `/api/v1/files/${id}`);
  });

  it('honours If-Range: a download resumed after a new version gets the whole new content', async () => {
    const a = path.join(dir, 'resume-a.bin');
    const b = path.join(dir, 'resume-b.bin');
    await writeFile(a, randomBytes(5000));
    await writeFile(b, randomBytes(6000));
    const up = await upload(s, s.token, a);
    const id = up.body.id as string;
    const oldTag = (await bytes(s, s.token, `/api/v1/files/${id}/download`)).headers.get('etag')!;
    const v2 = await api(s, s.token, 'POST', `/api/v1/files/${id}/versions`, await form({ file: await filePart(b) }));
    assert.equal(v2.status, 201, v2.text);
    const resume = (tag: string) =>
      fetch(`${s.url}/api/v1/files/${id}/download`, { headers: { ...auth(s.token), range: 'bytes=1000-', 'if-range': tag } });
    const stale = await resume(oldTag);
    assert.equal(stale.status, 200);
    assert.deepEqual(Buffer.from(await stale.arrayBuffer()), await import('node:fs/promises').then((f) => f.readFile(b)));
    const current = await resume(`"${v2.body.version.sha256}"`);
    assert.equal(current.status, 206);
    assert.equal((await current.arrayBuffer()).byteLength, 5000);
    await api(s, s.token, 'DELETE', `/api/v1/files/${id}`);
  });

  it('refuses an upload with two file parts as a request error (400), keeping nothing', async () => {
    const png = await makeImage(dir, 'twice.png', 20, 20, { format: 'png' });
    const before = (await api(s, s.token, 'GET', '/api/v1/files')).body.total;
    const blobs = await blobCount(s);
    const fd = await form({ file: [await filePart(png), await filePart(png)] });
    // It was 413 LIMIT_EXCEEDED ("reach files limit"), as if the upload were too large.
    const two = await api(s, s.token, 'POST', '/api/v1/files', fd);
    assert.equal(two.status, 400, two.text);
    assert.equal(two.body.error.code, 'VALIDATION_ERROR');
    assert.equal(two.body.error.details[0].path, 'file');
    const item = (await api(s, s.token, 'GET', '/api/v1/files')).body.items[0].id as string;
    const version = await api(
      s,
      s.token,
      'POST',
      `/api/v1/files/${item}/versions`,
      await form({ file: [await filePart(png), await filePart(png)] }),
    );
    assert.equal(version.status, 400, version.text);
    assert.equal((await api(s, s.token, 'GET', '/api/v1/files')).body.total, before);
    assert.equal(await blobCount(s), blobs);
    assert.deepEqual(readdirSync(path.join(s.dataDir, 'library', 'tmp')), []);
  });

  it('lets a user touch only its own items (404 for others); admins see all', async () => {
    const db = s.app.kiln.store.db;
    await createUser(db, { username: 'bob', password: 'bob-password-1', role: 'user' });
    await createUser(db, { username: 'carol', password: 'carol-password-1', role: 'user' });
    const bob = await login(s.url, 'bob', 'bob-password-1');
    const carol = await login(s.url, 'carol', 'carol-password-1');
    const png = await makeImage(dir, 'bobs.png', 20, 20, { format: 'png' });
    const item = await upload(s, bob, png);
    assert.equal(item.status, 201);
    const id = item.body.id;

    for (const [method, p, body] of [
      ['GET', `/api/v1/files/${id}`],
      ['GET', `/api/v1/files/${id}/download`],
      ['GET', `/api/v1/files/${id}/versions`],
      ['PATCH', `/api/v1/files/${id}`, { name: 'mine.png' }],
      ['POST', `/api/v1/files/${id}/versions/1/restore`],
      ['DELETE', `/api/v1/files/${id}/versions/1`],
      ['DELETE', `/api/v1/files/${id}`],
    ] as [string, string, unknown?][]) {
      const r = await api(s, carol, method, p, body);
      assert.equal(r.status, 404, `${method} ${p}: ${r.text}`);
      assert.equal(r.body.error.code, 'NOT_FOUND');
    }
    const carolRun = await api(
      s,
      carol,
      'POST',
      '/api/v1/tools/image/resize',
      await form({ fileId: id, settings: JSON.stringify({ width: 10 }) }),
    );
    assert.equal(carolRun.status, 404, carolRun.text);
    const carolUpload = await api(s, carol, 'POST', `/api/v1/files/${id}/versions`, await form({ file: await filePart(png) }));
    assert.equal(carolUpload.status, 404);
    assert.equal((await api(s, carol, 'GET', '/api/v1/files')).body.total, 0);

    // The owner and the admin see it; the admin's listing holds everyone's items.
    assert.equal((await api(s, bob, 'GET', `/api/v1/files/${id}`)).status, 200);
    assert.deepEqual(
      (await api(s, bob, 'GET', '/api/v1/files')).body.items.map((i: any) => i.id),
      [id],
    );
    assert.equal((await api(s, s.token, 'GET', `/api/v1/files/${id}`)).status, 200);
    const all = await api(s, s.token, 'GET', '/api/v1/files?pageSize=200');
    assert.ok(all.body.items.some((i: any) => i.id === id));
    assert.ok(all.body.items.some((i: any) => i.ownerId !== item.body.ownerId));
    // A new version by the owner, then the item is still the owner's.
    const v2 = await api(
      s,
      bob,
      'POST',
      `/api/v1/files/${id}/versions`,
      await form({ file: await filePart(await makeImage(dir, 'bobs2.png', 10, 10, { format: 'png' })) }),
    );
    assert.equal(v2.status, 201, v2.text);
    assert.equal(v2.body.version.version, 2);
  });
});

describe('file library quota and asynchronous runs', () => {
  let s: TestServer;
  before(async () => {
    // 0.1 MB leaves room for one 60 KB file.
    s = await startServer({ env: { SYNC_WAIT_MS: '0', LIBRARY_QUOTA_MB: '0.1' } });
  });
  after(() => s.close());

  it('refuses uploads over the per-user quota with 413 LIMIT_EXCEEDED, but not repeated content', async () => {
    const a = path.join(dir, 'a.bin');
    const b = path.join(dir, 'b.bin');
    await writeFile(a, randomBytes(60_000));
    await writeFile(b, randomBytes(60_000));
    assert.equal((await upload(s, s.token, a)).status, 201);
    const over = await upload(s, s.token, b);
    assert.equal(over.status, 413, over.text);
    assert.equal(over.body.error.code, 'LIMIT_EXCEEDED');
    assert.match(over.body.error.message, /quota/i);
    assert.match(over.body.error.message, /LIBRARY_QUOTA_MB/);
    // Nothing of the refused upload stays behind.
    assert.deepEqual(readdirSync(path.join(s.dataDir, 'library', 'tmp')), []);
    assert.equal(await blobCount(s), 1);
    const usage = await api(s, s.token, 'GET', '/api/v1/files/usage');
    assert.equal(usage.body.usedBytes, 60_000);
  });

  it("gives a refused upload's real size, not the bytes read when it passed the quota", async () => {
    // 300 KB arrives in several chunks; the first ones already pass the ~40 KB left.
    const big = path.join(dir, 'big.bin');
    await writeFile(big, randomBytes(300_000));
    const over = await upload(s, s.token, big);
    assert.equal(over.status, 413, over.text);
    assert.equal(over.body.error.details.neededBytes, 300_000);
    assert.match(over.body.error.message, /needs 0\.29 MB/);
    assert.deepEqual(readdirSync(path.join(s.dataDir, 'library', 'tmp')), []);
  });

  it('keeps a finished run whose output does not fit the quota, reporting why no version was saved', async () => {
    const noise = Buffer.alloc(40 * 40 * 3);
    for (let i = 0; i < noise.length; i++) noise[i] = (i * 7919) % 251;
    const small = path.join(dir, 'noise.png');
    await sharp(noise, { raw: { width: 40, height: 40, channels: 3 } })
      .png()
      .toFile(small);
    const up = await upload(s, s.token, small);
    assert.equal(up.status, 201, up.text);
    const run = await api(
      s,
      s.token,
      'POST',
      '/api/v1/tools/image/resize',
      await form({ fileId: up.body.id, settings: JSON.stringify({ width: 400 }) }),
    );
    assert.equal(run.status, 202, run.text);
    const sse = await readSse(`${s.url}/api/v1/jobs/${run.body.jobId}/progress`, s.token);
    assert.equal(sse.events.at(-1)!.event, 'completed');
    const job = await api(s, s.token, 'GET', `/api/v1/jobs/${run.body.jobId}`);
    assert.equal(job.body.result.savedFileId, undefined);
    assert.equal(job.body.result.afterSuccessError.code, 'LIMIT_EXCEEDED');
    assert.equal((await api(s, s.token, 'GET', `/api/v1/files/${up.body.id}`)).body.latestVersion, 1);
    // The output itself is still there to download.
    assert.equal((await fetch(s.url + job.body.result.downloadUrl, { headers: auth(s.token) })).status, 200);
    await api(s, s.token, 'DELETE', `/api/v1/files/${up.body.id}`);
  });

  it("saves a 202 job's output as a new version when it completes; the completed event carries savedFileId", async () => {
    const png = await makeImage(dir, 'async.png', 60, 30, { format: 'png' });
    const up = await upload(s, s.token, png);
    assert.equal(up.status, 201, up.text);
    const run = await api(
      s,
      s.token,
      'POST',
      '/api/v1/tools/image/resize',
      await form({ fileId: up.body.id, settings: JSON.stringify({ width: 15 }) }),
    );
    assert.equal(run.status, 202, run.text);
    const sse = await readSse(`${s.url}/api/v1/jobs/${run.body.jobId}/progress`, s.token);
    const done = sse.events.at(-1)!;
    assert.equal(done.event, 'completed', JSON.stringify(sse.events));
    assert.equal((done.data as any).savedFileId ?? (done.data as any).result?.savedFileId, up.body.id);
    const job = await api(s, s.token, 'GET', `/api/v1/jobs/${run.body.jobId}`);
    assert.equal(job.body.status, 'completed');
    assert.equal(job.body.result.savedFileId, up.body.id);
    const item = await api(s, s.token, 'GET', `/api/v1/files/${up.body.id}`);
    assert.equal(item.body.latestVersion, 2);
    assert.equal(item.body.versions[0].jobId, run.body.jobId);
    assert.equal((await sharp((await bytes(s, s.token, `/api/v1/files/${up.body.id}/download`)).buf).metadata()).width, 15);
  });
});
