/**
 * The quota's reading of what each owner's ended jobs hold (job_held_bytes, kept by triggers: migration
 * 0800) against the sum it replaced, on SQLite and PostgreSQL, through every kind of write a job gets:
 * inserted ended or queued, claimed, finished with or without an output, its output swept, its size or
 * owner changed, deleted one by one or many at once. And the migration itself counts the rows written
 * before it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { jobStorageUsed } from '../../daemon/http/quota.js';
import { openStore, type Store } from '../../daemon/store/db.js';
import { claimJob, deleteJob, finishJobRow, insertJob, updateJob, type JobRow } from '../../daemon/store/jobs.js';
import { tempDir } from '../helpers/fixtures.js';
import { jobRow } from '../helpers/job-row.js';
import { migrationDb } from '../helpers/migration-db.js';
import { pgSchema, pgUnavailable, TEST_PG_URL } from '../helpers/scale.js';

/** A queued job `id` of `owner` unless `patch` says otherwise. */
const job = (id: string, owner: string, patch: Partial<JobRow> = {}): JobRow =>
  jobRow(owner, { id, status: 'queued', stage: 'queued', ...patch });

/** The sum the quota used to read, per owner. */
async function summed(store: Store, owner: string): Promise<number> {
  const r = await store.db
    .selectFrom('jobs')
    .select((eb) => eb.fn.sum<number | string | null>('processed_size').as('bytes'))
    .where('owner_id', '=', owner)
    .where('status', 'not in', ['queued', 'running'])
    .where('output_path', 'is not', null)
    .executeTakeFirst();
  return Number(r?.bytes ?? 0);
}

async function agrees(store: Store, expected: Record<string, number>, when: string): Promise<void> {
  for (const [owner, bytes] of Object.entries(expected)) {
    assert.equal(await summed(store, owner), bytes, `${when}: the sum for ${owner}`);
    assert.equal(await jobStorageUsed(store.db, owner), bytes, `${when}: the kept reading for ${owner}`);
  }
}

async function exercise(store: Store): Promise<void> {
  const done = { status: 'completed' as const, progress: 100, stage: 'done', finished_at: 2000 };
  // Written ended, with an output (a batch record is written so), and without one.
  await insertJob(store.db, job('a1', 'ann', { ...done, output_path: '/o/a1', processed_size: 1000 }));
  await insertJob(store.db, job('a2', 'ann', { status: 'failed', finished_at: 2000, processed_size: 7 }));
  await agrees(store, { ann: 1000, bob: 0 }, 'inserted');
  // Queued, claimed, then finished with an output: counted only once ended.
  await insertJob(store.db, job('a3', 'ann'));
  await insertJob(store.db, job('b1', 'bob'));
  assert.ok(await claimJob(store.db, 'a3', 'i1'));
  await updateJob(store.db, 'a3', { progress: 50, stage: 'half' });
  await agrees(store, { ann: 1000, bob: 0 }, 'running');
  await finishJobRow(store.db, 'a3', { ...done, output_path: '/o/a3', output_name: 'x.jpg', processed_size: 250 });
  await finishJobRow(store.db, 'b1', { ...done, output_path: '/o/b1', output_name: 'y.jpg', processed_size: 40 });
  await agrees(store, { ann: 1250, bob: 40 }, 'finished');
  // A size corrected, an owner changed, the sweep removing an output (the record stays).
  await updateJob(store.db, 'a3', { processed_size: 300 });
  await updateJob(store.db, 'b1', { owner_id: 'ann' });
  await agrees(store, { ann: 1340, bob: 0 }, 'size and owner changed');
  await updateJob(store.db, 'a1', { output_path: null });
  await agrees(store, { ann: 340, bob: 0 }, 'swept');
  // A cancelled job with an output left (a race the service guards against) still counts, as the sum did.
  await insertJob(store.db, job('b2', 'bob', { status: 'cancelled', finished_at: 2000, output_path: '/o/b2', processed_size: 5 }));
  await agrees(store, { ann: 340, bob: 5 }, 'cancelled with output');
  // Deleted one by one (a job removed by its owner) and many at once (a user removed).
  await deleteJob(store.db, 'a3');
  await agrees(store, { ann: 40, bob: 5 }, 'deleted');
  await store.db.deleteFrom('jobs').where('owner_id', 'in', ['ann', 'bob']).execute();
  await agrees(store, { ann: 0, bob: 0 }, 'all deleted');
  // A size too large for 32 bits (a long video's output).
  await insertJob(store.db, job('c1', 'cid', { ...done, output_path: '/o/c1', processed_size: 6_000_000_000 }));
  await agrees(store, { cid: 6_000_000_000 }, 'a big output');
}

describe('job_held_bytes', () => {
  it('agrees with the sum through every kind of write (SQLite)', async () => {
    const store = await openStore({ dataDir: tempDir('kiln-held-') });
    try {
      await exercise(store);
    } finally {
      await store.close();
    }
  });

  it('agrees with the sum through every kind of write (PostgreSQL)', async (t) => {
    const why = await pgUnavailable(TEST_PG_URL);
    if (why) return t.skip(why);
    const schema = await pgSchema(TEST_PG_URL);
    const store = await openStore({ dataDir: tempDir('kiln-held-pg-'), databaseUrl: schema.url });
    try {
      await exercise(store);
    } finally {
      await store.close();
      await schema.drop();
    }
  });

  it('the migration counts the jobs written before it, and goes down again', async () => {
    const m = migrationDb();
    try {
      await m.to('0790_team_name_case');
      const row = (id: string, owner: string, status: string, output: string | null, size: number | null) =>
        m.db
          .insertInto('jobs')
          .values({ ...job(id, owner, { status: status as JobRow['status'], output_path: output, processed_size: size }) })
          .execute();
      await row('1', 'ann', 'completed', '/o/1', 100);
      await row('2', 'ann', 'completed', '/o/2', null);
      await row('3', 'ann', 'running', '/o/3', 50);
      await row('4', 'bob', 'failed', null, 9);
      await row('5', 'bob', 'completed', '/o/5', 30);
      await m.to('0800_job_held_bytes');
      const kept = await m.db.selectFrom('job_held_bytes').selectAll().orderBy('owner_id').execute();
      assert.deepEqual(
        kept.map((r) => [r.owner_id, Number(r.bytes)]),
        [
          ['ann', 100],
          ['bob', 30],
        ],
      );
      await m.to('0790_team_name_case');
      const triggers = await sql<{ n: number }>`select count(*) as n from sqlite_master where type = 'trigger'`.execute(m.db);
      assert.equal(Number(triggers.rows[0]!.n), 0);
      // Written while the triggers are gone, counted when the migration runs again.
      await row('6', 'bob', 'completed', '/o/6', 2);
      await m.to('0800_job_held_bytes');
      assert.equal(
        Number((await m.db.selectFrom('job_held_bytes').select('bytes').where('owner_id', '=', 'bob').executeTakeFirst())!.bytes),
        32,
      );
    } finally {
      await m.db.destroy();
    }
  });
});
