/**
 * Issue #17: the job queries every request makes stay cheap as the jobs table grows. Measured with
 * 2000 jobs, one user, a 64×64 resize and GET /api/v1/jobs in turn: the admin's list (all owners,
 * newest first) scanned and sorted the whole table (1.8 ms a call, 3.3 → 7.5 ms a request from 400
 * to 2000 jobs), and the quota's two readings per upload walked every job of the user through
 * jobs_owner_created (0.36 ms a pair).
 */
import { sql, type Kysely } from 'kysely';
import type { NamedMigration } from '../migrations.js';

// biome-ignore lint/suspicious/noExplicitAny: migrations run on any schema version
type AnyDb = Kysely<any>;

const migration: NamedMigration = {
  name: '0740_job_indexes',
  async up(db: AnyDb) {
    // Newest first across owners (the admin's list): read from the index, stopped at the page.
    await db.schema.createIndex('jobs_created').on('jobs').column('created_at').execute();
    // The user's queued and running jobs (their work directories count toward the quota).
    await db.schema.createIndex('jobs_owner_status').on('jobs').columns(['owner_id', 'status']).execute();
    // The outputs a user still holds (the quota's sum): only rows with an output are in it, so the sum
    // visits those, not every job the user ever ran.
    await db.schema
      .createIndex('jobs_owner_held')
      .on('jobs')
      .columns(['owner_id', 'status', 'processed_size'])
      .where(sql.ref('output_path'), 'is not', null)
      .execute();
  },
  async down(db: AnyDb) {
    for (const name of ['jobs_owner_held', 'jobs_owner_status', 'jobs_created']) await db.schema.dropIndex(name).execute();
  },
};

export default migration;
