/**
 * Object storage on a real S3-protocol server (s3rver, from npm): multipart uploads above the part
 * size and single PUTs below it, Range reads, listing, pre-signed downloads; and the library's blob
 * store on it, whose sweep must never remove content another writer is storing.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { BlobStore } from '../../daemon/library/blobs.js';
import { resolveS3Settings } from '../../daemon/storage/config.js';
import { S3Storage } from '../../daemon/storage/s3.js';
import { openStore, type Store } from '../../daemon/store/db.js';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { api, filePart, form, startServer } from '../helpers/server.js';
import { type S3Server, startS3 } from '../helpers/scale.js';

async function readAll(r: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of r) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

async function keys(s: S3Storage, prefix: string): Promise<string[]> {
  const out: string[] = [];
  for await (const o of s.list(prefix)) out.push(o.key);
  return out.sort();
}

describe('S3 object storage (s3rver)', () => {
  const dir = tempDir('kiln-s3-unit-');
  const bucketDir = tempDir('kiln-s3rver-unit-');
  const goneDir = tempDir('kiln-s3rver-gone-');
  let s3: S3Server;
  let storage: S3Storage;
  let redirecting: S3Storage;
  let store: Store;

  before(async () => {
    s3 = await startS3(bucketDir);
    process.env.AWS_ACCESS_KEY_ID = s3.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = s3.secretAccessKey;
    const env = { S3_BUCKET: s3.bucket, S3_ENDPOINT: s3.endpoint, S3_FORCE_PATH_STYLE: 'true', S3_PART_SIZE_MB: '5', S3_PREFIX: 'unit' };
    storage = await S3Storage.open(resolveS3Settings(env)!);
    redirecting = await S3Storage.open(resolveS3Settings({ ...env, S3_DOWNLOADS: 'redirect' })!);
    store = await openStore({ dataDir: dir });
  });

  after(async () => {
    await storage?.close();
    await redirecting?.close();
    await store?.close();
    await s3?.close();
  });

  it('uploads in parts above the part size and in one PUT below it; reads ranges; lists; deletes', async () => {
    const big = randomBytes(11 * 1048576 + 123);
    const file = path.join(dir, 'big.bin');
    await writeFile(file, big);
    s3.events.length = 0;
    await storage.putFile('t/big.bin', file);
    await storage.putStream('t/small.txt', Readable.from([Buffer.from('hello object storage')]));
    assert.deepEqual(s3.events, [
      { name: 'ObjectCreated:Post', key: 'unit/t/big.bin' },
      { name: 'ObjectCreated:Put', key: 'unit/t/small.txt' },
    ]);
    assert.equal((await storage.head('t/big.bin'))?.size, big.length);
    assert.equal(await storage.head('t/none'), undefined);
    assert.ok((await readAll(await storage.get('t/big.bin'))).equals(big));
    const start = 5 * 1048576 - 10;
    assert.ok((await readAll(await storage.get('t/big.bin', { start, end: start + 19 }))).equals(big.subarray(start, start + 20)));
    assert.deepEqual(await keys(storage, 't/'), ['t/big.bin', 't/small.txt']);
    const copy = path.join(dir, 'copy.bin');
    await storage.download('t/big.bin', copy);
    await storage.delete('t/big.bin');
    await storage.delete('t/big.bin');
    await assert.rejects(storage.get('t/big.bin'), { code: 'NOT_FOUND' });
    assert.deepEqual(await keys(storage, 't/'), ['t/small.txt']);
  });

  it('hands out pre-signed URLs only when S3_DOWNLOADS=redirect, and they fetch the object with the asked headers', async () => {
    assert.equal(await storage.presign('t/small.txt', { expiresS: 60 }), undefined);
    const url = await redirecting.presign('t/small.txt', {
      expiresS: 60,
      disposition: 'attachment; filename="s.txt"',
      contentType: 'text/plain',
    });
    const res = await fetch(url!);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-disposition'), 'attachment; filename="s.txt"');
    assert.equal(await res.text(), 'hello object storage');
    // s3rver does not check SigV4 signatures (its authentication middleware says so), so this shows the
    // URL's shape and query overrides, not that AWS would accept the signature: the signer is the SDK's.
    assert.equal(new URL(url!).searchParams.get('X-Amz-Expires'), '60');
    assert.match(new URL(url!).pathname, /^\/kiln-test\/unit\/t\/small\.txt$/);
  });

  it('stores library content once, removes it at 0 references, and sweeps only stale pending rows and row-less objects', async () => {
    const blobs = new BlobStore(store.db, storage, path.join(dir, 'scratch'));
    const content = randomBytes(2048);
    const hash = (await import('node:crypto')).createHash('sha256').update(content).digest('hex');
    const f1 = path.join(dir, 'one');
    await writeFile(f1, content);
    await blobs.add(f1, hash, content.length, { move: false });
    await blobs.add(f1, hash, content.length, { move: false });
    assert.deepEqual(await keys(storage, 'library/'), [blobs.keyOf(hash)]);
    assert.equal((await store.db.selectFrom('library_blobs').select('refs').where('hash', '=', hash).executeTakeFirstOrThrow()).refs, 2);
    await blobs.release(hash);
    assert.deepEqual(await keys(storage, 'library/'), [blobs.keyOf(hash)]);
    await blobs.release(hash);
    assert.deepEqual(await keys(storage, 'library/'), []);

    // Another writer's upload in progress: its pending row is fresh, so the object stays.
    const now = Date.now();
    const writing = 'a'.repeat(64);
    await store.db
      .insertInto('library_blobs')
      .values({ hash: writing, size: 3, refs: 0, created_at: now, state: 'pending', touched_at: now })
      .execute();
    await storage.putStream(blobs.keyOf(writing), Readable.from([Buffer.from('abc')]));
    // A writer that died an hour ago, and an object whose row is gone.
    const dead = 'b'.repeat(64);
    await store.db
      .insertInto('library_blobs')
      .values({ hash: dead, size: 3, refs: 0, created_at: now - 7_200_000, state: 'pending', touched_at: now - 7_200_000 })
      .execute();
    await storage.putStream(blobs.keyOf(dead), Readable.from([Buffer.from('def')]));
    const orphan = 'c'.repeat(64);
    await storage.putStream(blobs.keyOf(orphan), Readable.from([Buffer.from('ghi')]));

    // Objects count as old for the orphan check when `now` is far enough ahead of their write time.
    const later = Date.now() + 2 * 3_600_000;
    const fresh = await blobs.sweep(Date.now());
    assert.deepEqual(fresh, { released: 0, stalePending: 1, orphanObjects: 0 });
    assert.deepEqual(await keys(storage, 'library/'), [blobs.keyOf(writing), blobs.keyOf(orphan)].sort());
    // The live writer refreshes its row; hours on, only the row-less object goes.
    await store.db.updateTable('library_blobs').set({ touched_at: later }).where('hash', '=', writing).execute();
    const swept = await blobs.sweep(later);
    assert.deepEqual(swept, { released: 0, stalePending: 0, orphanObjects: 1 });
    assert.deepEqual(await keys(storage, 'library/'), [blobs.keyOf(writing)]);
  });

  it('makes an add wait while a sweep holds the content, then store it anew', async () => {
    const blobs = new BlobStore(store.db, storage, path.join(dir, 'scratch'));
    const content = randomBytes(1000);
    const hash = (await import('node:crypto')).createHash('sha256').update(content).digest('hex');
    const f = path.join(dir, 'again');
    await writeFile(f, content);
    const t = Date.now();
    // A sweep has claimed the row and is removing the object.
    await store.db
      .insertInto('library_blobs')
      .values({ hash, size: 1000, refs: 0, created_at: t, state: 'deleting', touched_at: t })
      .execute();
    const adding = blobs.add(f, hash, content.length, { move: false });
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(
      (await store.db.selectFrom('library_blobs').select('state').where('hash', '=', hash).executeTakeFirstOrThrow()).state,
      'deleting',
    );
    await store.db.deleteFrom('library_blobs').where('hash', '=', hash).execute();
    await adding;
    const row = await store.db.selectFrom('library_blobs').selectAll().where('hash', '=', hash).executeTakeFirstOrThrow();
    assert.equal(row.state, 'ready');
    assert.equal(row.refs, 1);
    assert.ok((await readAll(await blobs.open(hash))).equals(content));
  });

  it('makes readyz answer 503 when the bucket does not answer, and admin/health say so', async () => {
    // A server that was there and is gone: its port refuses connections.
    const gone = await startS3(goneDir);
    await gone.close();
    const env = { S3_BUCKET: gone.bucket, S3_ENDPOINT: gone.endpoint, S3_FORCE_PATH_STYLE: 'true' };
    const down = await startServer({ env });
    const up = await startServer({ env: { ...env, S3_ENDPOINT: s3.endpoint } });
    try {
      const ready = await fetch(`${down.url}/api/v1/readyz`);
      assert.equal(ready.status, 503);
      assert.deepEqual(((await ready.json()) as any).checks.objectStorage, { ok: false, error: 'object storage unavailable' });
      const health = (await (
        await fetch(`${down.url}/api/v1/admin/health`, { headers: { authorization: `Bearer ${down.token}` } })
      ).json()) as any;
      assert.equal(health.status, 'unhealthy');
      assert.equal(health.storage.mode, 's3');
      assert.equal(health.storage.objectStorage.ok, false);
      assert.equal(typeof health.storage.objectStorage.error, 'string');
      assert.equal((await fetch(`${up.url}/api/v1/readyz`)).status, 200);
    } finally {
      await down.close();
      await up.close();
    }
  });
  it('answers 503 UNAVAILABLE, not 500 or 404, when the bucket is missing', async () => {
    const env = { S3_BUCKET: 'no-such-bucket', S3_ENDPOINT: s3.endpoint, S3_FORCE_PATH_STYLE: 'true' };
    const missing = await S3Storage.open(resolveS3Settings(env)!);
    const file = path.join(dir, 'small-missing.bin');
    await writeFile(file, 'abc');
    try {
      // Not NOT_FOUND: a missing bucket must not pass for an expired or removed output.
      await assert.rejects(missing.get('jobs/x/out/a.png'), { code: 'UNAVAILABLE' });
      await assert.rejects(missing.putFile('jobs/x/in/a', file), { code: 'UNAVAILABLE' });
      // (HeadObject answers a bare 404 either way: head() cannot tell a missing bucket from a missing key.)
      await assert.rejects(missing.delete('jobs/x/in/a'), { code: 'UNAVAILABLE' });
      await assert.rejects(keys(missing, 'jobs/'), { code: 'UNAVAILABLE' });
    } finally {
      await missing.close();
    }
    const srv = await startServer({ env });
    try {
      const img = await makeImage(dir, 'missing-bucket.png', 16, 16, { format: 'png' });
      const run = await api(
        srv,
        srv.token,
        'POST',
        '/api/v1/tools/image/resize',
        await form({ file: await filePart(img), settings: '{"width":8}' }),
      );
      assert.equal(run.status, 503, run.text);
      assert.equal(run.body.error.code, 'UNAVAILABLE');
      const up = await api(srv, srv.token, 'POST', '/api/v1/files', await form({ file: await filePart(img) }));
      assert.equal(up.status, 503, up.text);
      assert.equal(up.body.error.code, 'UNAVAILABLE');
      assert.deepEqual(await readdir(path.join(srv.dataDir, 'jobs')).catch(() => []), []);
    } finally {
      await srv.close();
    }
  });
});
