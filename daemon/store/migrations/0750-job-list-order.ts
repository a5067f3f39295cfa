/**
 * GET /api/v1/jobs pages newest first with limit and offset. Jobs made in the same millisecond (a
 * script's burst, a batch's parts) tied on created_at, and the order of ties was the database's to
 * choose, so a page could repeat a job of the page before and skip another. The list is ordered by
 * (created_at, id) now, and this index serves that order as jobs_created served the old one.
 */
import type { Kysely } from 'kysely';
import type { NamedMigration } from '../migrations.js';

// biome-ignore lint/suspicious/noExplicitAny: migrations run on any schema version
type AnyDb = Kysely<any>;

const migration: NamedMigration = {
  name: '0750_job_list_order',
  async up(db: AnyDb) {
    await db.schema.createIndex('jobs_created_id').on('jobs').columns(['created_at', 'id']).execute();
    await db.schema.dropIndex('jobs_created').execute();
  },
  async down(db: AnyDb) {
    await db.schema.createIndex('jobs_created').on('jobs').column('created_at').execute();
    await db.schema.dropIndex('jobs_created_id').execute();
  },
};

export default migration;
