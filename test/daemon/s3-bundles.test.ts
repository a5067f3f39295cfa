/**
 * AI bundle archives through object storage (issue #19): two daemons on one PostgreSQL schema, one
 * Redis prefix and one s3rver bucket, each with its own data dir and download cache, and an npm
 * registry that cannot be reached. A bundle archive imported through A is kept once in the bucket
 * (`bundles/<bundle>/<version>/<sha256>.tar`); B, which lacks the bundle, lists it and installs it
 * from the bucket (verified against the pins, like any import) — a download would fail here. The
 * archive is the face-detection bundle with its tfjs runtime (about 20 MB), exported from a data dir
 * the test fills from the shared test download cache. Skipped when PostgreSQL or Redis does not answer.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { openAsBlob, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { objectArchiveStore } from '../../daemon/features/archive-store.js';
import { findBundle } from '../../src/ai/bundles/list.js';
import { exportBundle } from '../../src/ai/install/archive.js';
import { installForTest, sharedCacheDir } from '../ai/install-helper.js';
import { tempDir } from '../helpers/fixtures.js';
import { login, startServer, type TestServer } from '../helpers/server.js';
import { pgSchema, startS3, TEST_PG_URL, TEST_REDIS_URL, unavailable } from '../helpers/scale.js';

const PG = TEST_PG_URL;
const REDIS = TEST_REDIS_URL;
const skip = await unavailable(PG, REDIS);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const BUNDLE = 'face-detection';

async function api(s: TestServer, method: string, p: string, body?: FormData): Promise<{ status: number; json: any }> {
  const res = await fetch(s.url + p, { method, headers: { authorization: `Bearer ${s.token}` }, body });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

describe('AI bundle archives in the bucket: imported on one instance, installed from the bucket on another', { skip }, () => {
  let a: TestServer;
  let b: TestServer;
  let s3: Awaited<ReturnType<typeof startS3>>;
  let db: Awaited<ReturnType<typeof pgSchema>>;
  const fixtureData = tempDir('kiln-s3b-fixture-');
  const bucketDir = tempDir('kiln-s3b-s3rver-');
  const prefix = `kiln_s3b_${randomBytes(6).toString('hex')}`;
  const saved = { cache: process.env.KILN_AI_CACHE_DIR, registry: process.env.KILN_NPM_REGISTRY };
  let archive: string;
  let env: Record<string, string>;
  const version = findBundle(BUNDLE)!.version;
  const bundleKeys = async () => {
    const out: string[] = [];
    for await (const o of a.app.kiln.storage.list(`bundles/${BUNDLE}/`)) out.push(o.key);
    return out;
  };

  before(async () => {
    // The archive, built from the shared test cache (downloaded once per machine, not by this test).
    sharedCacheDir();
    await installForTest(BUNDLE, fixtureData);
    archive = path.join(fixtureData, 'face-detection.tar');
    await exportBundle(fixtureData, findBundle(BUNDLE)!, archive);
    // From here no instance can download: no shared cache, and a registry on a closed port.
    delete process.env.KILN_AI_CACHE_DIR;
    process.env.KILN_NPM_REGISTRY = 'http://127.0.0.1:9/';
    s3 = await startS3(bucketDir);
    db = await pgSchema(PG);
    process.env.AWS_ACCESS_KEY_ID = s3.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = s3.secretAccessKey;
    env = {
      DATABASE_URL: db.url,
      REDIS_URL: REDIS,
      REDIS_PREFIX: prefix,
      S3_ENDPOINT: s3.endpoint,
      S3_BUCKET: s3.bucket,
      S3_REGION: 'us-east-1',
      S3_FORCE_PATH_STYLE: 'true',
      SECRET_KEY: randomBytes(32).toString('hex'),
      ADMIN_PASSWORD: `s3b-${randomBytes(8).toString('hex')}`,
      KILN_HEARTBEAT_MS: '200',
    };
    a = await startServer({ generatePassword: true, env });
    b = await startServer({ generatePassword: true, env });
    for (const s of [a, b]) s.token = await login(s.url, 'admin', env.ADMIN_PASSWORD!);
  });

  after(async () => {
    await Promise.allSettled([a?.close(), b?.close()]);
    const { purgeRedisPrefix } = await import('../../daemon/queue/redis.js');
    await purgeRedisPrefix(REDIS, prefix).catch(() => {});
    await db?.drop();
    await s3?.close();
    if (saved.cache === undefined) delete process.env.KILN_AI_CACHE_DIR;
    else process.env.KILN_AI_CACHE_DIR = saved.cache;
    if (saved.registry === undefined) delete process.env.KILN_NPM_REGISTRY;
    else process.env.KILN_NPM_REGISTRY = saved.registry;
  });

  it('an instance without the bundle cannot download it here (the check below means something)', async () => {
    const r = await api(b, 'POST', `/api/v1/admin/features/${BUNDLE}/install`);
    assert.equal(r.status, 202, JSON.stringify(r.json));
    let st: any;
    for (let i = 0; i < 200; i++) {
      st = (await api(b, 'GET', `/api/v1/admin/features/${BUNDLE}`)).json;
      if (st.state === 'failed' || st.state === 'installed') break;
      await sleep(100);
    }
    assert.equal(st.state, 'failed', JSON.stringify(st));
    assert.match(st.error.message, /could not be reached/);
    assert.deepEqual(await bundleKeys(), [], 'a failed install keeps nothing in the bucket');
  });

  it('imported through A: kept once in the bucket; B lists it and installs it from there', async () => {
    const fd = new FormData();
    fd.append('archive', await openAsBlob(archive), 'face-detection.tar');
    const imported = await api(a, 'POST', '/api/v1/admin/features/import', fd);
    assert.equal(imported.status, 201, JSON.stringify(imported.json));
    assert.equal(imported.json.state, 'installed');
    const kept = await bundleKeys();
    assert.equal(kept.length, 1, kept.join(', '));
    assert.match(kept[0]!, new RegExp(`^bundles/${BUNDLE}/${version.replace(/\./g, '\\.')}/[0-9a-f]{64}\\.tar$`));

    // B's earlier failed download waits for a retry; the admin's install on B now takes the bucket's copy.
    const retry = await api(b, 'POST', `/api/v1/admin/features/${BUNDLE}/install`);
    assert.equal(retry.status, 202, JSON.stringify(retry.json));
    let st: any;
    for (let i = 0; i < 600; i++) {
      st = (await api(b, 'GET', `/api/v1/admin/features/${BUNDLE}`)).json;
      if (st.state === 'installed' || st.state === 'failed') break;
      await sleep(100);
    }
    assert.equal(st.state, 'installed', JSON.stringify(st));
    assert.equal(st.installed.via, 'import');
    assert.ok(
      st.runtimes.every((r: { installed: boolean }) => r.installed),
      JSON.stringify(st.runtimes),
    );
    assert.deepEqual(await bundleKeys(), kept, 'B stored nothing more');
    // The audit row is written just after the install switches in.
    let shared = false;
    for (let i = 0; i < 50 && !shared; i++, await sleep(100)) {
      const events = (await api(b, 'GET', '/api/v1/admin/audit?event=feature.installed')).json;
      shared = JSON.stringify(events).includes('"via":"shared"');
    }
    assert.ok(shared, 'the install is audited as from the shared archive');
  });

  it('an instance started after the import picks the bundle up when the admin lists the features', async () => {
    const c = await startServer({ generatePassword: true, env: env });
    try {
      c.token = await login(c.url, 'admin', env.ADMIN_PASSWORD!);
      let st: any;
      for (let i = 0; i < 600; i++) {
        const list = (await api(c, 'GET', '/api/v1/admin/features')).json;
        st = list.features.find((f: { id: string }) => f.id === BUNDLE);
        if (st.state === 'installed' || st.state === 'failed') break;
        await sleep(100);
      }
      assert.equal(st.state, 'installed', JSON.stringify(st));
      assert.equal(st.installed.via, 'import');
      // Bundles nobody installed stay missing: nothing for them in the bucket.
      const list = (await api(c, 'GET', '/api/v1/admin/features')).json;
      assert.equal(list.features.find((f: { id: string }) => f.id === 'transcription').state, 'missing');
    } finally {
      await c.close();
    }
  });

  it('a running instance picks up a bundle installed elsewhere by itself; removing it drops the shared archive', async () => {
    const store = objectArchiveStore(a.app.kiln.storage);
    await store.drop(BUNDLE);
    assert.deepEqual(await bundleKeys(), []);
    // Started while the bucket holds nothing: only the periodic look (BUNDLE_SYNC_S) can bring the bundle.
    const d = await startServer({ generatePassword: true, env: { ...env, BUNDLE_SYNC_S: '1' } });
    try {
      d.token = await login(d.url, 'admin', env.ADMIN_PASSWORD!);
      const blurFaces = async () =>
        ((await api(d, 'GET', '/api/v1/tools')).json.tools as { id: string; available: boolean }[]).find((t) => t.id === 'blur-faces')!;
      assert.equal((await blurFaces()).available, false);
      await store.put(BUNDLE, version, archive);
      let available = false;
      for (let i = 0; i < 300 && !available; i++) {
        available = (await blurFaces()).available;
        if (!available) await sleep(100);
      }
      assert.ok(available, 'blur-faces became available without an admin listing the features');
      // An admin removes it here: the shared archive goes too, so no instance brings it back.
      assert.equal((await api(d, 'DELETE', `/api/v1/admin/features/${BUNDLE}`)).status < 300, true);
      assert.deepEqual(await bundleKeys(), []);
      await sleep(1500);
      const st = (await api(d, 'GET', '/api/v1/admin/features')).json.features.find((f: { id: string }) => f.id === BUNDLE);
      assert.equal(st.state, 'missing', JSON.stringify(st));
    } finally {
      await d.close();
      await store.put(BUNDLE, version, archive);
    }
  });

  it('refuses a kept archive whose bytes no longer match the digest it is kept under', async () => {
    const store = objectArchiveStore(a.app.kiln.storage);
    const [key] = await bundleKeys();
    const altered = path.join(fixtureData, 'altered.tar');
    writeFileSync(altered, 'not the archive');
    await a.app.kiln.storage.putFile(key!, altered);
    await assert.rejects(store.get(BUNDLE, version, path.join(fixtureData, 'fetched.tar')), (e: any) => {
      assert.equal(e.code, 'UNAVAILABLE');
      assert.equal(e.reason, 'digest-mismatch');
      return true;
    });
  });
});
