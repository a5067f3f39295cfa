/**
 * Scale-out on object storage (issue #19): three daemons (two in this process, one `kiln serve` child
 * that is killed with SIGKILL) on one PostgreSQL schema, one Redis prefix and one S3 bucket served by
 * s3rver (an S3-protocol server on disk, from npm). No directory is shared: each instance has its own
 * data dir, so whatever crosses instances goes through the bucket. Skipped when PostgreSQL or Redis
 * does not answer (KILN_TEST_PG_URL, KILN_TEST_REDIS_URL override them).
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import type { RedisJobQueue } from '../../daemon/queue/redis.js';
import type { ObjectStorage } from '../../daemon/storage/storage.js';
import { exec } from '../../src/core/process.js';
import { KILN } from '../helpers/cli.js';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { filePart, form, login, readSse, startServer, type TestServer } from '../helpers/server.js';
import { readZip } from '../helpers/zip.js';
import { pgSchema, startS3, TEST_PG_URL, TEST_REDIS_URL, unavailable } from '../helpers/scale.js';

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

async function bytes(
  s: TestServer,
  p: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; buf: Buffer; res: Response }> {
  const res = await fetch(s.url + p, { headers: { ...auth(s.token), ...headers } });
  return { status: res.status, buf: Buffer.from(await res.arrayBuffer()), res };
}

async function until(s: TestServer, jobId: string, ok: (job: any) => boolean, ms = 20_000): Promise<any> {
  const end = Date.now() + ms;
  for (;;) {
    const job = await getJson(s, `/api/v1/jobs/${jobId}`);
    if (ok(job)) return job;
    if (Date.now() > end) assert.fail(`job ${jobId} still ${job.status} (${job.progress.stage}) after ${ms} ms`);
    await sleep(50);
  }
}

/** `kiln serve` in a process group of its own (a kill takes its ffmpeg along), resolved once it listens. */
async function serveChild(
  dataDir: string,
  env: Record<string, string>,
): Promise<{ child: ChildProcess; kill(signal?: NodeJS.Signals): void }> {
  const child = spawn(process.execPath, [KILN, 'serve', '--port', '0', '--data-dir', dataDir], {
    env: { ...process.env, ...env, KILN_HTTP_LOG: 'false', KILN_WARM_ENGINES: 'false', JOB_CONCURRENCY: '1' },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const kill = (signal: NodeJS.Signals = 'SIGKILL') => {
    try {
      process.kill(signal === 'SIGKILL' ? -child.pid! : child.pid!, signal);
    } catch {}
  };
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no listening line: ${out}`)), 30_000);
    const seen = (d: Buffer) => {
      out += d;
      if (/listening on/.test(out)) {
        clearTimeout(timer);
        child.off('exit', early);
        resolve();
      }
    };
    const early = (code: number | null) => reject(new Error(`kiln serve exited ${code}: ${out}`));
    child.stdout!.on('data', seen);
    child.stderr!.on('data', seen);
    child.on('exit', early);
  }).catch((e) => {
    kill();
    throw e;
  });
  return { child, kill };
}

async function keys(storage: ObjectStorage, prefix: string): Promise<string[]> {
  const out: string[] = [];
  for await (const o of storage.list(prefix)) out.push(o.key);
  return out.sort();
}

describe('scale-out on S3: three daemons, PostgreSQL, Redis, an S3 bucket, no shared directory', { skip }, () => {
  let a: TestServer;
  let b: TestServer;
  let c: TestServer;
  let env: Record<string, string>;
  let s3: Awaited<ReturnType<typeof startS3>>;
  let db: Awaited<ReturnType<typeof pgSchema>>;
  // Made here, not in a hook: tempDir registers the directory's removal after the suite.
  const dir = tempDir('kiln-s3-fx-');
  const bucketDir = tempDir('kiln-s3rver-');
  const killedDataDir = tempDir('kiln-s3-killed-');
  const stoppedDataDir = tempDir('kiln-s3-stopped-');
  const prefix = `kiln_s3_${randomBytes(6).toString('hex')}`;
  let clip: string;
  /** Long enough to be stopped mid-run on a fast machine. */
  let longClip: string;

  before(async () => {
    s3 = await startS3(bucketDir);
    db = await pgSchema(PG);
    // The SDK reads credentials from the process environment (the standard AWS variables).
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
      // Every instance decrypts the same secrets: the data key is not on a shared disk any more.
      SECRET_KEY: randomBytes(32).toString('hex'),
      ADMIN_PASSWORD: 's3-' + randomBytes(8).toString('hex'),
      KILN_HEARTBEAT_MS: '200',
      KILN_SSE_HEARTBEAT_MS: '300',
      JOB_CONCURRENCY: '2',
      SYNC_WAIT_MS: '0',
    };
    a = await startServer({ generatePassword: true, env });
    b = await startServer({ generatePassword: true, env });
    c = await startServer({ generatePassword: true, env });
    for (const s of [a, b, c]) s.token = await login(s.url, 'admin', env.ADMIN_PASSWORD!);
    clip = path.join(dir, 'clip.mp4');
    longClip = path.join(dir, 'long.mp4');
    const ff = (out: string, spec: string) =>
      exec(
        'ffmpeg',
        ['-v', 'error', '-f', 'lavfi', '-i', spec, '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-y', out],
        {
          timeoutMs: 60_000,
        },
      );
    await Promise.all([ff(clip, 'testsrc2=size=320x240:rate=25:duration=20'), ff(longClip, 'testsrc2=size=480x270:rate=25:duration=40')]);
  });

  after(async () => {
    await Promise.allSettled([a?.close(), b?.close(), c?.close()]);
    const { purgeRedisPrefix } = await import('../../daemon/queue/redis.js');
    await purgeRedisPrefix(REDIS, prefix).catch(() => {});
    await db?.drop();
    await s3?.close();
  });

  it('reports the bucket in readyz and admin/health', async () => {
    const ready = await (await fetch(`${b.url}/api/v1/readyz`)).json();
    assert.deepEqual(ready.checks.objectStorage, { ok: true });
    const health = await getJson(c, '/api/v1/admin/health');
    assert.equal(health.storage.mode, 's3');
    assert.equal(health.storage.objectStorage.bucket, s3.bucket);
    assert.equal(health.storage.objectStorage.ok, true);
  });

  it('runs each periodic pass on one instance: one holds its lease, another takes over when it lapses', async () => {
    const instances = [a, b, c].map((s) => s.app.kiln.jobs.instanceId);
    const { Redis } = await import('ioredis');
    const r = new Redis(REDIS);
    try {
      // The reaper runs every KILN_HEARTBEAT_MS (200 ms) on whichever instance holds its lease.
      await sleep(500);
      const holder = await r.get(`${prefix}:kiln:lease:reaper`);
      assert.ok(holder && instances.includes(holder), `reaper lease held by ${holder}`);
    } finally {
      r.disconnect();
    }
    const name = `test-${randomBytes(4).toString('hex')}`;
    assert.deepEqual(await Promise.all([a, b, c].map((s) => worker(s).lead(name, 400))), [true, false, false]);
    assert.equal(await worker(a).lead(name, 400), true, 'the holder renews');
    await sleep(600);
    assert.equal(await worker(b).lead(name, 400), true, 'a lapsed lease goes to the next instance that asks');
    assert.equal(await worker(a).lead(name, 400), false);
  });

  it('keeps a library file saved through A: listed, versioned and downloaded (with Range) through B and C', async () => {
    const storage = a.app.kiln.storage;
    const before = await keys(storage, 'library/blobs/');
    const png = await makeImage(dir, 'lib.png', 90, 60, { format: 'png' });
    const up = await fetch(`${a.url}/api/v1/files`, {
      method: 'POST',
      headers: auth(a.token),
      body: await form({ file: await filePart(png) }),
    });
    assert.equal(up.status, 201);
    const item = (await up.json()) as { id: string; versions: { sha256: string }[] };
    const listed = await getJson(b, '/api/v1/files?name=lib');
    assert.ok(listed.items.some((i: any) => i.id === item.id));
    // A second version through B: a tool run on the item, which any instance may run.
    const run = await fetch(`${b.url}/api/v1/tools/image/resize`, {
      method: 'POST',
      headers: { ...auth(b.token), prefer: 'wait=20' },
      body: await form({ fileId: item.id, settings: '{"width": 45}' }),
    });
    assert.equal(run.status, 200);
    assert.equal(((await run.json()) as { savedFileId: string }).savedFileId, item.id);
    const versions = await getJson(c, `/api/v1/files/${item.id}/versions`);
    assert.deepEqual(
      versions.versions.map((v: any) => v.version),
      [2, 1],
    );
    assert.equal((await sharp((await bytes(c, `/api/v1/files/${item.id}/download`)).buf).metadata()).width, 45);
    const v1 = await bytes(b, `/api/v1/files/${item.id}/versions/1/download`);
    assert.equal((await sharp(v1.buf).metadata()).width, 90);
    const part = await bytes(c, `/api/v1/files/${item.id}/versions/1/download`, { range: 'bytes=1-3' });
    assert.equal(part.status, 206);
    assert.equal(part.buf.toString('latin1'), 'PNG');
    // The same content uploaded through C is stored once.
    const again = await fetch(`${c.url}/api/v1/files`, {
      method: 'POST',
      headers: auth(c.token),
      body: await form({ file: await filePart(png, 'copy.png') }),
    });
    assert.equal(again.status, 201);
    const copy = (await again.json()) as { id: string };
    const held = await keys(storage, 'library/blobs/');
    assert.equal(held.length, before.length + 2);
    assert.ok(held.includes(`library/blobs/${item.versions[0]!.sha256.slice(0, 2)}/${item.versions[0]!.sha256}`));
    // Nothing of it is on any instance's disk.
    for (const s of [a, b, c]) assert.equal(existsSync(path.join(s.dataDir, 'library', 'blobs')), false);
    // Deleting the item through B keeps the content the copy holds; deleting the copy through A frees it.
    assert.equal((await fetch(`${b.url}/api/v1/files/${item.id}`, { method: 'DELETE', headers: auth(b.token) })).status, 200);
    assert.equal((await keys(storage, 'library/blobs/')).length, before.length + 1);
    assert.equal((await bytes(a, `/api/v1/files/${copy.id}/download`)).buf.equals(v1.buf), true);
    assert.equal((await fetch(`${a.url}/api/v1/files/${copy.id}`, { method: 'DELETE', headers: auth(a.token) })).status, 200);
    assert.deepEqual(await keys(storage, 'library/blobs/'), before);
  });

  it('runs a pipeline posted to A on another instance, streams its progress from B and serves the download from C', async () => {
    await worker(a).pauseWorker();
    try {
      const pipeline = JSON.stringify({
        steps: [
          { tool: 'trim-video', settings: { startS: 1, endS: 4, precise: true } },
          { tool: 'compress-video', settings: { quality: 'strong' } },
        ],
      });
      const res = await fetch(`${a.url}/api/v1/pipelines/run`, {
        method: 'POST',
        headers: { ...auth(a.token), prefer: 'respond-async' },
        body: await form({ file: await filePart(clip), pipeline }),
      });
      assert.equal(res.status, 202, await res.clone().text());
      const { jobId } = (await res.json()) as { jobId: string };
      const { events } = await readSse(`${b.url}/api/v1/jobs/${jobId}/progress`, b.token, 60_000);
      assert.equal(events.at(-1)?.event, 'completed', JSON.stringify(events.at(-1)));
      const done = events.at(-1)!.data as { downloadUrl: string };
      const row = await a.app.kiln.store.db.selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirstOrThrow();
      assert.notEqual(row.instance_id, a.app.kiln.jobs.instanceId);
      assert.match(row.output_path ?? '', /^object:jobs\//);
      // The inputs left the bucket once the run was done; the output stays until the TTL sweep.
      assert.deepEqual(
        (await keys(c.app.kiln.storage, `jobs/${jobId}/`)).map((k) => k.split('/')[2]),
        ['out'],
      );
      const out = path.join(dir, 'pipeline-out.mp4');
      const dl = await bytes(c, done.downloadUrl);
      assert.equal(dl.status, 200);
      const { writeFile } = await import('node:fs/promises');
      await writeFile(out, dl.buf);
      const probe = await exec('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', out], {
        timeoutMs: 20_000,
      });
      assert.ok(Math.abs(Number(probe.stdout.trim()) - 3) < 0.5, `duration ${probe.stdout}`);
      // No instance keeps the job's files on its disk.
      for (const s of [a, b, c]) assert.equal(existsSync(path.join(s.config.sharedDir, 'jobs', jobId)), false);
    } finally {
      worker(a).resumeWorker();
    }
  });

  it('runs a batch posted to A on another instance: progress streamed from B, the ZIP back to A and again from C', async () => {
    // No worker takes it until B's progress stream is open: the answer (and its X-Job-Id) starts only
    // once the batch has ended, so the client finds the job by the clientJobId it chose.
    for (const s of [a, b, c]) await worker(s).pauseWorker();
    try {
      const inputs = await Promise.all([40, 50, 60].map((w) => makeImage(dir, `b${w}.png`, w, 30, { format: 'png' })));
      const answer = fetch(`${a.url}/api/v1/tools/image/resize/batch`, {
        method: 'POST',
        headers: auth(a.token),
        body: await form({
          files: await Promise.all(inputs.map((p) => filePart(p))),
          settings: '{"width": 20}',
          clientJobId: 's3-scaled-batch',
        }),
      });
      let jobId = '';
      for (let i = 0; i < 400 && !jobId; i++) {
        jobId = (await getJson(b, '/api/v1/jobs?clientJobId=s3-scaled-batch')).jobs[0]?.jobId ?? '';
        if (!jobId) await new Promise((r) => setTimeout(r, 50));
      }
      assert.ok(jobId, 'the queued batch is listed by its clientJobId');
      const progress = readSse(`${b.url}/api/v1/jobs/${jobId}/progress`, b.token, 30_000);
      // The stream's first event (the state so far) shows it is subscribed before any item runs.
      await new Promise((r) => setTimeout(r, 300));
      worker(b).resumeWorker();
      worker(c).resumeWorker();
      const res = await answer;
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('x-job-id'), jobId);
      assert.deepEqual(
        ['x-batch-total', 'x-batch-succeeded', 'x-batch-failed'].map((h) => res.headers.get(h)),
        ['3', '3', '0'],
      );
      const zip = await readZip(Buffer.from(await res.arrayBuffer()));
      const { events } = await progress;
      assert.equal(events.at(-1)?.event, 'completed');
      assert.ok(events.some((e) => e.event === 'progress' && (e.data as { stage?: string }).stage === '3/3'));
      const manifest = JSON.parse(zip.get('manifest.json')!.toString());
      assert.equal(manifest.succeeded, 3);
      // In input order, whatever order the items ended in.
      assert.deepEqual(
        manifest.items.map((m: { input: string }) => m.input),
        ['b40.png', 'b50.png', 'b60.png'],
      );
      for (const m of manifest.items) assert.equal((await sharp(zip.get(m.output)!).metadata()).width, 20);
      const row = await a.app.kiln.store.db.selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirstOrThrow();
      assert.equal(row.kind, 'batch');
      assert.notEqual(row.instance_id, a.app.kiln.jobs.instanceId);
      const again = await bytes(c, `/api/v1/download/${jobId}/resize-batch.zip`);
      assert.equal(again.status, 200);
      assert.deepEqual([...(await readZip(again.buf)).keys()].sort(), [...zip.keys()].sort());
      assert.deepEqual(await keys(c.app.kiln.storage, `jobs/${jobId}/`), [`jobs/${jobId}/out/resize-batch.zip`]);
    } finally {
      for (const s of [a, b, c]) worker(s).resumeWorker();
    }
  });

  it('runs a pipeline batch posted to B on another instance', async () => {
    await worker(b).pauseWorker();
    try {
      const inputs = await Promise.all([30, 40].map((w) => makeImage(dir, `p${w}.png`, w, 20, { format: 'png' })));
      const pipeline = JSON.stringify({
        steps: [
          { tool: 'resize', settings: { width: 10 } },
          { tool: 'rotate', settings: { angle: 90 } },
        ],
      });
      const res = await fetch(`${b.url}/api/v1/pipelines/batch`, {
        method: 'POST',
        headers: auth(b.token),
        body: await form({ files: await Promise.all(inputs.map((p) => filePart(p))), pipeline }),
      });
      assert.equal(res.status, 200);
      const jobId = res.headers.get('x-job-id')!;
      const zip = await readZip(Buffer.from(await res.arrayBuffer()));
      const manifest = JSON.parse(zip.get('manifest.json')!.toString());
      assert.equal(manifest.succeeded, 2, JSON.stringify(manifest));
      // Resized to 10 wide, then turned: 10 high.
      for (const m of manifest.items) assert.equal((await sharp(zip.get(m.output)!).metadata()).height, 10);
      const row = await b.app.kiln.store.db.selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirstOrThrow();
      assert.notEqual(row.instance_id, b.app.kiln.jobs.instanceId);
    } finally {
      worker(b).resumeWorker();
    }
  });

  it('fails the job of an instance killed with SIGKILL within seconds, leaks and loses no object, and the others keep serving', async () => {
    const storage = a.app.kiln.storage;
    const png = await makeImage(dir, 'keep.png', 30, 20, { format: 'png' });
    const kept = await fetch(`${b.url}/api/v1/files`, {
      method: 'POST',
      headers: auth(b.token),
      body: await form({ file: await filePart(png) }),
    });
    const keptId = ((await kept.json()) as { id: string }).id;
    const objectsBefore = await keys(storage, '');
    await Promise.all([a, b, c].map((s) => worker(s).pauseWorker()));
    let kill: (signal?: NodeJS.Signals) => void = () => {};
    try {
      ({ kill } = await serveChild(killedDataDir, env));
      const r = await fetch(`${a.url}/api/v1/tools/video/compress-video`, {
        method: 'POST',
        headers: auth(a.token),
        body: await form({ file: await filePart(longClip), settings: '{"quality": "strong"}' }),
      });
      const { jobId } = (await r.json()) as { jobId: string };
      await until(b, jobId, (j) => j.status === 'running' && j.progress.percent > 0, 30_000);
      assert.ok((await keys(storage, `jobs/${jobId}/in/`)).length === 1, 'the input is in the bucket while the job runs');
      kill();
      const t0 = Date.now();
      const job = await until(c, jobId, (j) => j.status !== 'running', 10_000);
      assert.equal(job.status, 'failed');
      assert.equal(job.error.reason, 'daemon-restarted');
      assert.ok(Date.now() - t0 < 5000, `noticed after ${Date.now() - t0} ms`);
      // No leak: the dead run's input is gone from the bucket (removed just after the failure is recorded,
      // so within moments of it); no loss: everything else is still there.
      let objectsAfter = await keys(storage, '');
      for (let i = 0; i < 50 && JSON.stringify(objectsAfter) !== JSON.stringify(objectsBefore); i++) {
        await new Promise((r) => setTimeout(r, 100));
        objectsAfter = await keys(storage, '');
      }
      assert.deepEqual(objectsAfter, objectsBefore);
      assert.equal(
        (await bytes(c, `/api/v1/files/${keptId}/download`)).buf.equals(await (await import('node:fs/promises')).readFile(png)),
        true,
      );
      for (const s of [a, b, c]) assert.equal((await fetch(`${s.url}/api/v1/readyz`)).status, 200);
      // Nor on the dead instance's disk: its scratch copy of the run goes when it starts again, with
      // an upload cut off before its job was recorded (older than a request may last); a fresh one stays.
      const { mkdir, utimes } = await import('node:fs/promises');
      const scratch = path.join(killedDataDir, 'jobs', jobId);
      assert.equal(existsSync(scratch), true, 'the killed run left its scratch copy');
      const cutOff = path.join(killedDataDir, 'jobs', 'cut-off-upload');
      const fresh = path.join(killedDataDir, 'jobs', 'fresh-upload');
      await mkdir(path.join(cutOff, 'in'), { recursive: true });
      await mkdir(path.join(fresh, 'in'), { recursive: true });
      const old = new Date(Date.now() - 2 * 3_600_000);
      await utimes(cutOff, old, old);
      ({ kill } = await serveChild(killedDataDir, env));
      assert.equal(existsSync(scratch), false, 'the scratch copy is removed at start-up');
      assert.equal(existsSync(cutOff), false);
      assert.equal(existsSync(fresh), true);
    } finally {
      kill();
      for (const s of [a, b, c]) worker(s).resumeWorker();
    }
  });

  it('hands back the job of an instance stopped with SIGTERM after the grace period; another instance runs it', async () => {
    const storage = a.app.kiln.storage;
    await Promise.all([a, b, c].map((s) => worker(s).pauseWorker()));
    let stopped: Awaited<ReturnType<typeof serveChild>> | undefined;
    let jobId = '';
    try {
      stopped = await serveChild(stoppedDataDir, { ...env, SHUTDOWN_GRACE_S: '0' });
      const r = await fetch(`${a.url}/api/v1/tools/video/compress-video`, {
        method: 'POST',
        headers: auth(a.token),
        body: await form({ file: await filePart(longClip), settings: '{"quality": "strong"}' }),
      });
      jobId = ((await r.json()) as { jobId: string }).jobId;
      await until(b, jobId, (j) => j.status === 'running' && j.progress.percent > 0, 30_000);
      const exited = new Promise<number | null>((resolve) => stopped!.child.on('exit', resolve));
      const t0 = Date.now();
      stopped.kill('SIGTERM');
      assert.equal(await exited, 0);
      // No grace (SHUTDOWN_GRACE_S=0): the hand-back at once, then a clean exit.
      assert.ok(Date.now() - t0 < 8000, `stopped after ${Date.now() - t0} ms`);
      const back = await getJson(c, `/api/v1/jobs/${jobId}`);
      assert.equal(back.status, 'queued', JSON.stringify(back));
      assert.equal((await keys(storage, `jobs/${jobId}/in/`)).length, 1, 'the input stays for the next run');
    } finally {
      stopped?.kill();
      for (const s of [a, b, c]) worker(s).resumeWorker();
    }
    const done = await until(b, jobId, (j) => j.status === 'completed' || j.status === 'failed', 60_000);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    assert.deepEqual(
      (await keys(storage, `jobs/${jobId}/`)).map((k) => k.split('/')[2]),
      ['out'],
    );
    assert.equal((await bytes(c, done.result.downloadUrl)).status, 200);
  });
});
