/**
 * Scaled mode: two real daemons in this process on one PostgreSQL schema, one Redis prefix and one
 * shared directory (all unique to this run and removed after). Jobs submitted to one instance run on
 * the other, progress, cancellation and the sync window cross instances, a job whose instance
 * vanishes ends failed, and one whose instance stops is handed back to the other. Skipped when
 * PostgreSQL or Redis does not answer.
 * KILN_TEST_PG_URL and KILN_TEST_REDIS_URL override the services.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { exec } from '../../src/core/process.js';
import { insertJob } from '../../daemon/store/jobs.js';
import type { RedisJobQueue } from '../../daemon/queue/redis.js';
import { KILN } from '../helpers/cli.js';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { jobRow } from '../helpers/job-row.js';
import { filePart, form, login, readSse, startServer, type TestServer } from '../helpers/server.js';
import { pgSchema, TEST_PG_URL, TEST_REDIS_URL, unavailable } from '../helpers/scale.js';
import { readZip } from '../helpers/zip.js';

const PG = TEST_PG_URL;
const REDIS = TEST_REDIS_URL;

const skip = await unavailable(PG, REDIS);
const auth = (token: string) => ({ authorization: `Bearer ${token}` });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const worker = (s: TestServer) => s.app.kiln.jobs.queue as RedisJobQueue;

async function getJson(s: TestServer, p: string): Promise<any> {
  const res = await fetch(s.url + p, { headers: auth(s.token) });
  assert.equal(res.status, 200, `${p}: ${res.status}`);
  return res.json();
}

async function submit(s: TestServer, route: string, fd: FormData): Promise<{ status: number; json: any }> {
  const res = await fetch(s.url + route, { method: 'POST', headers: auth(s.token), body: fd });
  return { status: res.status, json: await res.json() };
}

/** Polls the job through `s` until `ok` holds (or fails after `ms`). */
async function until(s: TestServer, jobId: string, ok: (job: any) => boolean, ms = 20_000): Promise<any> {
  const end = Date.now() + ms;
  for (;;) {
    const job = await getJson(s, `/api/v1/jobs/${jobId}`);
    if (ok(job)) return job;
    if (Date.now() > end) assert.fail(`job ${jobId} still ${job.status} (${job.progress.stage}) after ${ms} ms`);
    await sleep(50);
  }
}

const instanceOf = async (s: TestServer, jobId: string) =>
  (await s.app.kiln.store.db.selectFrom('jobs').select('instance_id').where('id', '=', jobId).executeTakeFirstOrThrow()).instance_id;

describe('scaled mode: two daemons, PostgreSQL, Redis, one shared directory', { skip }, () => {
  let a: TestServer;
  let b: TestServer;
  // Registers its own removal after the suite (it must not be made inside a hook).
  const dir = tempDir();
  let shared: string;
  let longClip: string;
  let shortClip: string;
  const prefix = `kiln_t_${randomBytes(6).toString('hex')}`;
  let db: Awaited<ReturnType<typeof pgSchema>> | undefined;
  let env: Record<string, string>;

  before(async () => {
    shared = mkdtempSync(path.join(process.env.KILN_TMP_DIR ?? tmpdir(), 'kiln-shared-'));
    db = await pgSchema(PG);
    const common = {
      DATABASE_URL: db.url,
      REDIS_URL: REDIS,
      REDIS_PREFIX: prefix,
      SHARED_DIR: shared,
      ADMIN_PASSWORD: 'scaled-' + randomBytes(8).toString('hex'),
      KILN_HEARTBEAT_MS: '200',
      KILN_SSE_HEARTBEAT_MS: '300',
      JOB_CONCURRENCY: '2',
    };
    env = common;
    // A answers at once (202); B waits for the result (the sync window).
    a = await startServer({ generatePassword: true, env: { ...common, SYNC_WAIT_MS: '0' } });
    b = await startServer({ generatePassword: true, env: { ...common, SYNC_WAIT_MS: '20000' } });
    // ADMIN_PASSWORD is set, so the helper signs nobody in: one admin in the shared database for both.
    a.token = await login(a.url, 'admin', common.ADMIN_PASSWORD);
    b.token = await login(b.url, 'admin', common.ADMIN_PASSWORD);
    const ff = (out: string, spec: string) =>
      exec(
        'ffmpeg',
        ['-v', 'error', '-f', 'lavfi', '-i', spec, '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-y', out],
        { timeoutMs: 60_000 },
      );
    shortClip = path.join(dir, 'short.mp4');
    longClip = path.join(dir, 'long.mp4');
    await Promise.all([
      ff(shortClip, 'testsrc2=size=320x240:rate=25:duration=3'),
      ff(longClip, 'testsrc2=size=640x360:rate=25:duration=30'),
    ]);
  });

  after(async () => {
    await Promise.allSettled([a?.close(), b?.close()]);
    const { purgeRedisPrefix } = await import('../../daemon/queue/redis.js');
    await purgeRedisPrefix(REDIS, prefix).catch(() => {});
    await db?.drop();
    rmSync(shared, { recursive: true, force: true });
  });

  it('reports the Redis queue in readiness and admin health', async () => {
    const ready = await fetch(`${a.url}/api/v1/readyz`);
    assert.equal(ready.status, 200);
    assert.equal((await ready.json()).checks.queue.ok, true);
    const health = await getJson(b, '/api/v1/admin/health');
    assert.equal(health.queue.kind, 'redis');
    assert.equal(health.queue.concurrency, 2);
    assert.deepEqual(Object.keys(health.queue.shared).sort(), ['active', 'waiting']);
    assert.equal(health.database.kind, 'postgres');
    assert.notEqual(a.app.kiln.jobs.instanceId, b.app.kiln.jobs.instanceId);
  });

  it('runs a job submitted to A on A; B serves its output from the shared directory', async () => {
    await worker(b).pauseWorker();
    try {
      const jpg = await makeImage(dir, 'cross.jpg', 120, 80);
      const r = await submit(a, '/api/v1/tools/image/resize', await form({ file: await filePart(jpg), settings: '{"width": 30}' }));
      assert.equal(r.status, 202);
      const job = await until(b, r.json.jobId, (j) => j.status === 'completed');
      assert.equal(await instanceOf(a, r.json.jobId), a.app.kiln.jobs.instanceId);
      assert.ok(job.result.downloadUrl.startsWith(`/api/v1/download/${r.json.jobId}/`));
      const dl = await fetch(b.url + job.result.downloadUrl, { headers: auth(b.token) });
      assert.equal(dl.status, 200);
      const meta = await sharp(Buffer.from(await dl.arrayBuffer())).metadata();
      assert.deepEqual([meta.width, meta.height], [30, 20]);
      assert.ok(existsSync(path.join(shared, 'jobs', r.json.jobId)));
    } finally {
      worker(b).resumeWorker();
    }
  });

  it('answers 200 within SYNC_WAIT_MS on B for a job that ran on A', async () => {
    await worker(b).pauseWorker();
    try {
      const jpg = await makeImage(dir, 'sync.png', 64, 64);
      const t0 = Date.now();
      const r = await submit(b, '/api/v1/tools/image/resize', await form({ file: await filePart(jpg), settings: '{"width": 16}' }));
      assert.equal(r.status, 200, JSON.stringify(r.json));
      assert.ok(Date.now() - t0 < 15_000);
      assert.equal(await instanceOf(b, r.json.jobId), a.app.kiln.jobs.instanceId);
      assert.equal(r.json.processedSize > 0, true);
      const dl = await fetch(a.url + r.json.downloadUrl, { headers: auth(a.token) });
      assert.equal((await sharp(Buffer.from(await dl.arrayBuffer())).metadata()).width, 16);
    } finally {
      worker(b).resumeWorker();
    }
  });

  it('streams on B the progress of a video job submitted to and run by A', async () => {
    await Promise.all([worker(a).pauseWorker(), worker(b).pauseWorker()]);
    try {
      const r = await submit(a, '/api/v1/tools/video/stabilize-video', await form({ file: await filePart(shortClip) }));
      assert.equal(r.status, 202);
      const stream = readSse(`${b.url}/api/v1/jobs/${r.json.jobId}/progress`, b.token, 30_000);
      // The stream is subscribed (its first event is the queued snapshot) before A starts the run.
      await sleep(300);
      worker(a).resumeWorker();
      const { events } = await stream;
      assert.equal(events[0]?.event, 'progress');
      assert.equal((events[0]!.data as { percent: number }).percent, 0);
      const live = events.slice(1).filter((e) => e.event === 'progress');
      assert.ok(live.length >= 2, `live progress events: ${JSON.stringify(events)}`);
      assert.ok(live.some((e) => /analysing|stabilizing/.test((e.data as { stage?: string }).stage ?? '')));
      const last = events.at(-1)!;
      assert.equal(last.event, 'completed', JSON.stringify(last.data));
      assert.equal(await instanceOf(b, r.json.jobId), a.app.kiln.jobs.instanceId);
      const ids = events.slice(1).map((e) => Number(e.id));
      assert.deepEqual(
        ids,
        [...ids].sort((x, y) => x - y),
      );
      const dl = await fetch(b.url + (last.data as { downloadUrl: string }).downloadUrl, { headers: auth(b.token) });
      assert.equal(dl.status, 200);
      assert.ok((await dl.arrayBuffer()).byteLength > 1000);
    } finally {
      worker(a).resumeWorker();
      worker(b).resumeWorker();
    }
  });

  it('cancels on B a job running on A: the engine stops, nothing remains', async () => {
    await worker(b).pauseWorker();
    try {
      const r = await submit(
        a,
        '/api/v1/tools/video/compress-video',
        await form({ file: await filePart(longClip), settings: '{"quality": "strong"}' }),
      );
      assert.equal(r.status, 202);
      await until(b, r.json.jobId, (j) => j.status === 'running' && j.progress.percent > 0);
      assert.equal(a.app.kiln.jobs.queue.state().running, 1);
      const t0 = Date.now();
      const res = await fetch(`${b.url}/api/v1/jobs/${r.json.jobId}/cancel`, { method: 'POST', headers: auth(b.token) });
      const view = await res.json();
      assert.equal(res.status, 200);
      assert.equal(view.status, 'cancelled');
      assert.equal(view.error.code, 'CANCELLED');
      // A confirmed (its run ended) well before the confirm time-out at which B would end the record itself.
      assert.ok(Date.now() - t0 < 5000, `cancel took ${Date.now() - t0} ms`);
      // A recorded the end (that is what B heard) just before its worker slot came free.
      for (let i = 0; i < 40 && a.app.kiln.jobs.queue.state().running > 0; i++) await sleep(50);
      assert.equal(a.app.kiln.jobs.queue.state().running, 0);
      assert.equal(existsSync(path.join(shared, 'jobs', r.json.jobId)), false);
    } finally {
      worker(b).resumeWorker();
    }
  });

  it('cancels on B a job still queued: no instance runs it afterwards', async () => {
    await Promise.all([worker(a).pauseWorker(), worker(b).pauseWorker()]);
    let jobId = '';
    try {
      const jpg = await makeImage(dir, 'queued.jpg', 40, 40);
      const r = await submit(a, '/api/v1/tools/image/resize', await form({ file: await filePart(jpg), settings: '{"width": 10}' }));
      jobId = r.json.jobId;
      const view = await (await fetch(`${b.url}/api/v1/jobs/${jobId}/cancel`, { method: 'POST', headers: auth(b.token) })).json();
      assert.equal(view.status, 'cancelled');
    } finally {
      worker(a).resumeWorker();
      worker(b).resumeWorker();
    }
    await sleep(500);
    const job = await getJson(a, `/api/v1/jobs/${jobId}`);
    assert.equal(job.status, 'cancelled');
    assert.equal(job.startedAt, null);
    assert.equal((await worker(a).sharedCounts())?.waiting, 0);
    assert.equal(existsSync(path.join(shared, 'jobs', jobId)), false);
  });

  it('runs a library (fileId) job on another instance than the one that took it; the new version is readable from both', async () => {
    const png = await makeImage(dir, 'lib.png', 90, 60, { format: 'png' });
    const up = await fetch(`${a.url}/api/v1/files`, {
      method: 'POST',
      headers: auth(a.token),
      body: await form({ file: await filePart(png) }),
    });
    assert.equal(up.status, 201);
    const item = (await up.json()) as { id: string };
    // B takes the request and waits for the result; with B's worker paused, A runs it and saves the version.
    await worker(b).pauseWorker();
    let r: { status: number; json: any };
    try {
      r = await submit(b, '/api/v1/tools/image/resize', await form({ fileId: item.id, settings: '{"width": 45}' }));
    } finally {
      worker(b).resumeWorker();
    }
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.equal(r.json.savedFileId, item.id);
    assert.equal(await instanceOf(a, r.json.jobId), a.app.kiln.jobs.instanceId);
    const dl = await fetch(`${a.url}/api/v1/files/${item.id}/download`, { headers: auth(a.token) });
    assert.equal(dl.status, 200);
    assert.equal((await sharp(Buffer.from(await dl.arrayBuffer())).metadata()).width, 45);
    assert.ok(existsSync(path.join(shared, 'library')));
  });

  it('cancels on A a batch streaming from B', async () => {
    const inputs = await Promise.all([1, 2, 3, 4].map((i) => filePart(longClip, `clip${i}.mp4`)));
    // The answer (and its X-Job-Id) starts only when every run has ended: the client finds its running
    // batch by the clientJobId it chose.
    const answer = fetch(`${b.url}/api/v1/tools/video/compress-video/batch`, {
      method: 'POST',
      headers: auth(b.token),
      body: await form({ files: inputs, settings: '{"quality": "strong"}', clientJobId: 'scaled-batch' }),
    });
    let jobId = '';
    for (let i = 0; i < 400 && !jobId; i++) {
      jobId = (await getJson(a, '/api/v1/jobs?clientJobId=scaled-batch')).jobs[0]?.jobId ?? '';
      if (!jobId) await sleep(50);
    }
    await until(a, jobId, (j) => j.status === 'running');
    const t0 = Date.now();
    const view = await (await fetch(`${a.url}/api/v1/jobs/${jobId}/cancel`, { method: 'POST', headers: auth(a.token) })).json();
    assert.equal(view.status, 'cancelled');
    assert.ok(Date.now() - t0 < 5000, `cancel took ${Date.now() - t0} ms`);
    const res = await answer;
    assert.equal(res.status, 499);
    assert.equal((await res.json()).error.code, 'CANCELLED');
    for (let i = 0; i < 40 && b.app.kiln.jobs.queue.state().running > 0; i++) await sleep(50);
    assert.equal(b.app.kiln.jobs.queue.state().running, 0);
  });

  it('checks a queued batch before queueing it, answers its counts in the headers and honours respond-async', async () => {
    const jobCount = async () =>
      Number(
        (
          await a.app.kiln.store.db
            .selectFrom('jobs')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const words = path.join(dir, 'words.png');
    await writeFile(words, 'plain words, not a picture\n'.repeat(10));
    const pics = await Promise.all([50, 30].map((w) => makeImage(dir, `q${w}.png`, w, 20, { format: 'png' })));
    const post = (files: string[], headers: Record<string, string> = {}) =>
      Promise.all(files.map((f) => filePart(f))).then(async (parts) =>
        fetch(`${b.url}/api/v1/tools/image/resize/batch`, {
          method: 'POST',
          headers: { ...auth(b.token), ...headers },
          body: await form({ files: parts, settings: '{"width": 10}' }),
        }),
      );
    // Every input refused from its bytes: 415 at once, nothing queued.
    const before = await jobCount();
    const none = await post([words]);
    assert.equal(none.status, 415);
    assert.equal((await none.json()).error.code, 'UNSUPPORTED_INPUT');
    assert.equal(await jobCount(), before);
    // A mixed batch: the counts in the headers, the archive in input order, the refused input in the manifest.
    const mixed = await post([pics[0]!, words, pics[1]!]);
    assert.equal(mixed.status, 200);
    assert.deepEqual(
      ['x-batch-total', 'x-batch-succeeded', 'x-batch-failed'].map((h) => mixed.headers.get(h)),
      ['3', '2', '1'],
    );
    const zip = await readZip(Buffer.from(await mixed.arrayBuffer()));
    assert.deepEqual([...zip.keys()], ['q50.png', 'q30.png', 'manifest.json']);
    const manifest = JSON.parse(zip.get('manifest.json')!.toString());
    assert.equal(manifest.items[1].error.code, 'UNSUPPORTED_INPUT');
    const row = await getJson(a, `/api/v1/jobs/${mixed.headers.get('x-job-id')}`);
    assert.equal(row.status, 'completed');
    assert.deepEqual(row.result.data, { total: 3, succeeded: 2, failed: 1 });
    // Prefer: respond-async: 202 at once; the archive downloads later from any instance.
    const detached = await post([pics[1]!, pics[0]!], { prefer: 'respond-async' });
    assert.equal(detached.status, 202);
    assert.equal(detached.headers.get('preference-applied'), 'respond-async');
    const { jobId } = await detached.json();
    const done = await until(a, jobId, (j) => j.status === 'completed');
    assert.deepEqual(done.result.data, { total: 2, succeeded: 2, failed: 0 });
    const later = await fetch(a.url + done.result.downloadUrl, { headers: auth(a.token) });
    assert.equal(later.status, 200);
    assert.deepEqual([...(await readZip(Buffer.from(await later.arrayBuffer()))).keys()], ['q30.png', 'q50.png', 'manifest.json']);
  });

  it('fails, never leaves queued, a job Redis lost while its instance lives (FLUSHALL, a restart without persistence)', async () => {
    await Promise.all([worker(a).pauseWorker(), worker(b).pauseWorker()]);
    let jobId = '';
    try {
      const jpg = await makeImage(dir, 'lost.jpg', 40, 40);
      const r = await submit(a, '/api/v1/tools/image/resize', await form({ file: await filePart(jpg), settings: '{"width": 10}' }));
      assert.equal(r.status, 202);
      jobId = r.json.jobId;
      assert.equal(await worker(a).has(jobId), true);
      // Everything of this deployment in Redis goes, as with FLUSHALL: the job, heartbeats, leases.
      const { purgeRedisPrefix } = await import('../../daemon/queue/redis.js');
      await purgeRedisPrefix(REDIS, prefix);
      assert.equal(await worker(a).has(jobId), false);
    } finally {
      worker(a).resumeWorker();
      worker(b).resumeWorker();
    }
    // A lives and beats again; its own check finds the job gone from the queue within a few beats.
    const stream = readSse(`${b.url}/api/v1/jobs/${jobId}/progress`, b.token, 5000);
    const job = await until(b, jobId, (j) => j.status !== 'queued', 5000);
    assert.equal(job.status, 'failed');
    assert.equal(job.error.code, 'UNAVAILABLE');
    assert.equal(job.error.reason, 'queue-lost');
    assert.equal((await stream).events.at(-1)?.event, 'failed');
    // The files go right after the record (a stream may learn the end from the database first).
    for (let i = 0; i < 40 && existsSync(path.join(shared, 'jobs', jobId)); i++) await sleep(50);
    assert.equal(existsSync(path.join(shared, 'jobs', jobId)), false);
    // The queue works again for new jobs.
    const png = await makeImage(dir, 'after-lost.png', 40, 40, { format: 'png' });
    const again = await submit(a, '/api/v1/tools/image/resize', await form({ file: await filePart(png), settings: '{"width": 10}' }));
    assert.equal((await until(b, again.json.jobId, (j) => j.status === 'completed' || j.status === 'failed', 10_000)).status, 'completed');
  });

  it('fails, never leaves running, a job whose instance vanished without a word', async () => {
    const owner = (await b.app.kiln.store.db.selectFrom('users').select('id').executeTakeFirstOrThrow()).id;
    const id = randomBytes(12).toString('hex');
    const now = Date.now();
    await insertJob(
      b.app.kiln.store.db,
      jobRow(owner, { id, progress: 30, instance_id: 'gone-instance', work_dir: path.join(shared, 'jobs', id), created_at: now }),
    );
    // No heartbeat key exists for that instance: the next reaper pass (every KILN_HEARTBEAT_MS) ends it.
    const job = await until(a, id, (j) => j.status !== 'running', 5000);
    assert.equal(job.status, 'failed');
    assert.equal(job.error.reason, 'daemon-restarted');
  });

  it('fails the running job of a vanished instance behind a backlog of a thousand queued jobs', async () => {
    const db = b.app.kiln.store.db;
    const owner = (await db.selectFrom('users').select('id').executeTakeFirstOrThrow()).id;
    const now = Date.now();
    const row = (id: string, status: 'queued' | 'running', instance: string, created: number) =>
      jobRow(owner, {
        id,
        status,
        stage: status,
        client_job_id: 'backlog',
        instance_id: instance,
        created_at: created,
        started_at: status === 'running' ? now : null,
      });
    // Older than the orphan, waiting on an instance that beats (its key set here): nothing to reap there.
    const live = `live-${randomBytes(4).toString('hex')}`;
    const { Redis } = await import('ioredis');
    const r = new Redis(REDIS);
    await r.set(`${prefix}:kiln:instance:${live}`, '1', 'PX', 60_000);
    const backlog = Array.from({ length: 1000 }, (_, i) => row(randomBytes(12).toString('hex'), 'queued', live, now - 5000 + i));
    const orphan = randomBytes(12).toString('hex');
    try {
      for (let i = 0; i < backlog.length; i += 250)
        await db
          .insertInto('jobs')
          .values(backlog.slice(i, i + 250))
          .execute();
      await insertJob(db, row(orphan, 'running', 'gone-instance', now));
      const job = await until(a, orphan, (j) => j.status !== 'running', 5000);
      assert.equal(job.error.reason, 'daemon-restarted');
    } finally {
      await db.deleteFrom('jobs').where('client_job_id', '=', 'backlog').execute();
      await r.del(`${prefix}:kiln:instance:${live}`);
      r.disconnect();
    }
  });

  it('ends a stream whose final event was lost, from the database', async () => {
    const owner = (await b.app.kiln.store.db.selectFrom('users').select('id').executeTakeFirstOrThrow()).id;
    const id = randomBytes(12).toString('hex');
    const now = Date.now();
    // "Running" on A (alive, so the reaper leaves it alone); its end is then written with no event sent.
    await insertJob(b.app.kiln.store.db, jobRow(owner, { id, progress: 50, instance_id: a.app.kiln.jobs.instanceId, created_at: now }));
    const stream = readSse(`${b.url}/api/v1/jobs/${id}/progress`, b.token, 5000);
    await sleep(200);
    await b.app.kiln.store.db
      .updateTable('jobs')
      .set({ status: 'failed', error: JSON.stringify({ code: 'INTERNAL', message: 'gone' }), finished_at: Date.now() })
      .where('id', '=', id)
      .execute();
    const { events } = await stream;
    assert.equal(events.at(-1)?.event, 'failed');
    assert.equal((events.at(-1)!.data as { message: string }).message, 'gone');
  });

  it('fails the running job of an instance killed without warning', async () => {
    const dataDir = tempDir('kiln-killed-');
    const child = spawn(process.execPath, [KILN, 'serve', '--port', '0', '--data-dir', dataDir], {
      env: { ...process.env, ...env, KILN_HTTP_LOG: 'false', KILN_WARM_ENGINES: 'false', JOB_CONCURRENCY: '1' },
      // Its own process group: the kill takes its ffmpeg along, as a machine going down would.
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const kill = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {}
    };
    await Promise.all([worker(a).pauseWorker(), worker(b).pauseWorker()]);
    try {
      await new Promise<void>((resolve, reject) => {
        let out = '';
        const timer = setTimeout(() => reject(new Error(`no listening line: ${out}`)), 30_000);
        const seen = (d: Buffer) => {
          out += d;
          if (/listening on/.test(out)) {
            clearTimeout(timer);
            resolve();
          }
        };
        child.stdout!.on('data', seen);
        child.stderr!.on('data', seen);
        child.on('exit', (code) => reject(new Error(`kiln serve exited ${code}: ${out}`)));
      });
      const r = await submit(
        a,
        '/api/v1/tools/video/compress-video',
        await form({ file: await filePart(longClip), settings: '{"quality": "strong"}' }),
      );
      await until(b, r.json.jobId, (j) => j.status === 'running' && j.progress.percent > 0);
      const runner = await instanceOf(b, r.json.jobId);
      assert.ok(![a.app.kiln.jobs.instanceId, b.app.kiln.jobs.instanceId].includes(runner));
      kill();
      const t0 = Date.now();
      const job = await until(b, r.json.jobId, (j) => j.status !== 'running', 10_000);
      assert.equal(job.status, 'failed');
      assert.equal(job.error.reason, 'daemon-restarted');
      // Three missed beats of 200 ms, then the next reaper pass.
      assert.ok(Date.now() - t0 < 3000, `noticed after ${Date.now() - t0} ms`);
      assert.equal(existsSync(path.join(shared, 'jobs', r.json.jobId)), false);
    } finally {
      kill();
      worker(a).resumeWorker();
      worker(b).resumeWorker();
    }
  });

  it('hands back, not fails, the job of an instance that stops while running it; another instance runs it', async () => {
    await worker(b).pauseWorker();
    let jobId = '';
    try {
      const r = await submit(
        a,
        '/api/v1/tools/video/compress-video',
        await form({ file: await filePart(shortClip), settings: '{"quality": "strong"}' }),
      );
      jobId = r.json.jobId;
      await until(b, jobId, (j) => j.status === 'running');
      assert.equal(await instanceOf(b, jobId), a.app.kiln.jobs.instanceId);
      await a.close();
      const back = await getJson(b, `/api/v1/jobs/${jobId}`);
      assert.equal(back.status, 'queued', JSON.stringify(back));
      // The inputs stay for the next run.
      assert.equal(existsSync(path.join(shared, 'jobs', jobId, 'in')), true);
    } finally {
      worker(b).resumeWorker();
    }
    const done = await until(b, jobId, (j) => j.status !== 'queued' && j.status !== 'running', 30_000);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    assert.equal(await instanceOf(b, jobId), b.app.kiln.jobs.instanceId);
    const dl = await fetch(`${b.url}${done.result.downloadUrl}`, { headers: auth(b.token) });
    assert.equal(dl.status, 200);
    assert.ok((await dl.arrayBuffer()).byteLength > 1000);
    assert.equal(await b.app.kiln.jobs.queue.ping(), undefined);
  });
});
