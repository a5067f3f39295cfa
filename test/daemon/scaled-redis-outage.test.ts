/**
 * Scaled mode while Redis is unreachable (a TCP relay in front of it, closed to cut it off): a cancel
 * answers within seconds, never hangs on a queue command waiting for Redis to come back, and never
 * answers 500. Skipped when PostgreSQL or Redis does not answer.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { RedisJobQueue } from '../../daemon/queue/redis.js';
import { insertJob } from '../../daemon/store/jobs.js';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { pgSchema, TEST_PG_URL, TEST_REDIS_URL, unavailable } from '../helpers/scale.js';
import { filePart, form, login, startServer, type TestServer } from '../helpers/server.js';
import { type TcpRelay, tcpRelay } from '../helpers/tcp-relay.js';

const skip = await unavailable(TEST_PG_URL, TEST_REDIS_URL);

/** A relay to Redis whose URL the daemon is given: cutting it cuts the daemon off Redis. */
async function relay(target: URL): Promise<TcpRelay & { url: string }> {
  const r = await tcpRelay(target.hostname, Number(target.port || 6379));
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String(r.port);
  return { ...r, url: url.toString() };
}

describe('scaled mode with Redis cut off', { skip }, () => {
  let s: TestServer;
  let link: Awaited<ReturnType<typeof relay>>;
  let db: Awaited<ReturnType<typeof pgSchema>> | undefined;
  const prefix = `kiln_t_${randomBytes(6).toString('hex')}`;
  const dir = tempDir();

  before(async () => {
    link = await relay(new URL(TEST_REDIS_URL));
    db = await pgSchema(TEST_PG_URL);
    const password = 'outage-' + randomBytes(8).toString('hex');
    s = await startServer({
      generatePassword: true,
      env: { DATABASE_URL: db.url, REDIS_URL: link.url, REDIS_PREFIX: prefix, ADMIN_PASSWORD: password, SYNC_WAIT_MS: '0' },
    });
    s.token = await login(s.url, 'admin', password);
  });

  after(async () => {
    link?.mend();
    await s?.close();
    await link?.close();
    const { purgeRedisPrefix } = await import('../../daemon/queue/redis.js');
    await purgeRedisPrefix(TEST_REDIS_URL, prefix).catch(() => {});
    await db?.drop();
  });

  it('cancels a queued job within seconds, and answers 503 for one running elsewhere, not when Redis comes back', async () => {
    const worker = s.app.kiln.jobs.queue as RedisJobQueue;
    const auth = { authorization: `Bearer ${s.token}` };
    await worker.pauseWorker();
    const jpg = await makeImage(dir, 'q.jpg', 40, 40);
    const res = await fetch(`${s.url}/api/v1/tools/image/resize`, {
      method: 'POST',
      headers: auth,
      body: await form({ file: await filePart(jpg), settings: '{"width": 10}' }),
    });
    assert.equal(res.status, 202);
    const { jobId } = (await res.json()) as { jobId: string };
    // Recorded as running on another instance: only a message over Redis can stop it.
    const elsewhere = randomBytes(12).toString('hex');
    const now = Date.now();
    await insertJob(s.app.kiln.store.db, {
      ...(await s.app.kiln.store.db.selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirstOrThrow()),
      id: elsewhere,
      status: 'running',
      instance_id: 'another-instance',
      work_dir: null,
      created_at: now,
      started_at: now,
    });
    link.cut();
    const t0 = Date.now();
    const cancel = (id: string) =>
      fetch(`${s.url}/api/v1/jobs/${id}/cancel`, { method: 'POST', headers: auth, signal: AbortSignal.timeout(20_000) });
    const [queued, running] = await Promise.all([cancel(jobId), cancel(elsewhere)]);
    const view = (await queued.json()) as { status: string };
    assert.equal(queued.status, 200, JSON.stringify(view));
    assert.equal(view.status, 'cancelled');
    const refused = (await running.json()) as { error: { code: string } };
    assert.equal(running.status, 503, JSON.stringify(refused));
    assert.equal(refused.error.code, 'UNAVAILABLE');
    assert.ok(Date.now() - t0 < 12_000, `the cancels took ${Date.now() - t0} ms`);
    link.mend();
    worker.resumeWorker();
    // Back in service once Redis is: a new job runs.
    for (
      let i = 0;
      i < 100 &&
      !(await worker.ping().then(
        () => true,
        () => false,
      ));
      i++
    )
      await new Promise((r) => setTimeout(r, 100));
    const again = await fetch(`${s.url}/api/v1/tools/image/resize`, {
      method: 'POST',
      headers: { ...auth, prefer: 'wait=20' },
      body: await form({ file: await filePart(jpg), settings: '{"width": 10}' }),
    });
    assert.equal(again.status, 200, await again.text());
  });
});
