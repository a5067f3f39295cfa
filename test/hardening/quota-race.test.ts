/**
 * Issue #21 item 6: quotas hold under concurrency. Eight parallel 600 kB uploads against a 1 MB quota
 * (LIBRARY_QUOTA_MB for the file library, USER_QUOTA_MB for job storage): at most one is stored, the
 * others answer 413, and nothing stays reserved or on disk for the refused ones. Runs on PostgreSQL
 * too when KILN_TEST_PG is set (test/helpers/server.ts).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { chargeQuota } from '../../daemon/http/quota.js';
import { insertJob, type JobRow } from '../../daemon/store/jobs.js';
import { makeUser } from '../daemon/accounts/http.js';
import { jobRow } from '../helpers/job-row.js';
import { api, startServer, type TestServer } from '../helpers/server.js';

const KB600 = 600 * 1024;

/** A PNG of noise (it does not compress) of about `bytes`. */
async function noisePng(bytes: number): Promise<Uint8Array<ArrayBuffer>> {
  const side = Math.ceil(Math.sqrt(bytes / 3));
  return new Uint8Array(
    await sharp(randomBytes(side * side * 3), { raw: { width: side, height: side, channels: 3 } })
      .png({ compressionLevel: 0 })
      .toBuffer(),
  );
}

/** The record of a finished job whose output of `bytes` is still held (counts toward the quota). */
function heldOutput(ownerId: string, instanceId: string, bytes: number): JobRow {
  const now = Date.now();
  return jobRow(ownerId, {
    status: 'completed',
    progress: 100,
    stage: 'done',
    result: '{}',
    instance_id: instanceId,
    output_path: '/nowhere/out.png',
    output_name: 'out.png',
    content_type: 'image/png',
    original_size: bytes,
    processed_size: bytes,
    created_at: now,
    started_at: now,
    finished_at: now,
  });
}

function parallel<T>(n: number, f: (i: number) => Promise<T>): Promise<T[]> {
  return Promise.all(Array.from({ length: n }, (_, i) => f(i)));
}

function tally(results: { status: number; text: string }[]): { ok: number; refused: number } {
  for (const r of results) assert.ok([200, 201, 413].includes(r.status), `${r.status}: ${r.text}`);
  for (const r of results.filter((x) => x.status === 413)) assert.match(r.text, /LIMIT_EXCEEDED/);
  return { ok: results.filter((r) => r.status !== 413).length, refused: results.filter((r) => r.status === 413).length };
}

describe('library quota under parallel uploads', () => {
  let s: TestServer;
  before(async () => {
    // The daemon's configuration: the live libraryQuotaMb falls back to it.
    s = await startServer({ env: { LIBRARY_QUOTA_MB: '1' } });
  });
  after(() => s.close());

  it('8 parallel 600 kB uploads with LIBRARY_QUOTA_MB=1: at most one is stored', async () => {
    const user = await makeUser(s, 'lib-racer');
    const results = await parallel(8, (i) => {
      const f = new FormData();
      f.append('file', new File([randomBytes(KB600)], `part-${i}.bin`));
      return api(s, user.token, 'POST', '/api/v1/files', f);
    });
    const { ok, refused } = tally(results);
    assert.ok(ok <= 1, `${ok} of 8 uploads were stored`);
    assert.ok(refused >= 7);
    const usage = await api(s, user.token, 'GET', '/api/v1/files/usage');
    assert.ok(usage.body.usedBytes <= 1048576, `${usage.body.usedBytes} bytes stored against a 1 MB quota`);
    assert.equal(usage.body.usedBytes, ok * KB600);
    // Reservations are released, refused uploads leave no scratch file, and the room is usable again.
    const left = await s.app.kiln.store.db.selectFrom('quota_reservations').selectAll().execute();
    assert.deepEqual(left, []);
    const tmp = path.join(s.dataDir, 'library', 'tmp');
    assert.deepEqual(existsSync(tmp) ? readdirSync(tmp) : [], []);
    if (ok === 0) {
      const one = new FormData();
      one.append('file', new File([randomBytes(KB600)], 'alone.bin'));
      assert.equal((await api(s, user.token, 'POST', '/api/v1/files', one)).status, 201);
    }
    // New versions race the same way: 600 kB held leaves room for one 300 kB version.
    const mine = (await api(s, user.token, 'GET', '/api/v1/files')).body.items[0];
    const again = await parallel(3, () => {
      const f = new FormData();
      f.append('file', new File([randomBytes(300 * 1024)], 'new.bin'));
      return api(s, user.token, 'POST', `/api/v1/files/${mine.id}/versions`, f);
    });
    assert.ok(tally(again).ok <= 1);
  });
});

describe('job storage quota under parallel uploads', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer({ env: { USER_QUOTA_MB: '1', SYNC_WAIT_MS: '30000' } });
  });
  after(() => s.close());

  it('8 parallel 600 kB uploads with USER_QUOTA_MB=1: at most one job is run', async () => {
    const user = await makeUser(s, 'job-racer');
    const png = await noisePng(KB600);
    assert.ok(png.length > KB600 && png.length < 1048576, `${png.length} B`);
    const side = (await sharp(png).metadata()).width!;
    // Same size out as in: a finished job holds about 600 kB of output until it is swept.
    const results = await parallel(8, () => {
      const f = new FormData();
      f.append('file', new File([png], 'noise.png'));
      f.append('settings', JSON.stringify({ width: side }));
      return api(s, user.token, 'POST', '/api/v1/tools/image/resize', f);
    });
    const { ok } = tally(results);
    assert.ok(ok <= 1, `${ok} of 8 jobs ran against a 1 MB quota`);
    // Refused uploads leave nothing behind.
    const jobs = await s.app.kiln.store.db.selectFrom('jobs').select('id').where('owner_id', '=', user.id).execute();
    assert.equal(jobs.length, ok);
  });

  it("an upload that began before a parallel one's job finished is checked against that job's output at its end", async () => {
    // The interleaving a loaded machine produced (2 of 8 jobs ran): B reads what the user's jobs hold,
    // A's job then finishes and A is answered (its upload leaves the in-flight count), then B's bytes come.
    const user = await makeUser(s, 'job-racer-2');
    const db = s.app.kiln.store.db;
    const b = await chargeQuota(db, user.id, 1);
    const a = await chargeQuota(db, user.id, 1);
    a.add(KB600);
    await a.confirm();
    await insertJob(db, heldOutput(user.id, s.app.kiln.jobs.instanceId, KB600));
    a.release();
    b.add(KB600); // against the reading from before A's job ended: passes
    await assert.rejects(b.confirm(), { code: 'LIMIT_EXCEEDED' });
    b.release();
  });

  it('a user at the quota: a large declared body is refused before its bytes, a small one once they are in', async () => {
    const user = await makeUser(s, 'job-full');
    const db = s.app.kiln.store.db;
    await insertJob(db, heldOutput(user.id, s.app.kiln.jobs.instanceId, 1048576));
    // Large (or undeclared): the reading comes first and refuses at once.
    await assert.rejects(chargeQuota(db, user.id, 1, 5 * 1048576), { code: 'LIMIT_EXCEEDED' });
    await assert.rejects(chargeQuota(db, user.id, 1), { code: 'LIMIT_EXCEEDED' });
    // Small: one reading, after the body (confirm), which refuses it all the same.
    const small = await chargeQuota(db, user.id, 1, 2000);
    small.add(1500);
    await assert.rejects(small.confirm(), { code: 'LIMIT_EXCEEDED' });
    small.release();
  });
});
