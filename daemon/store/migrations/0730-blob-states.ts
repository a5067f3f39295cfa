/**
 * Issue #19: library blobs shared by several instances. A row is written (pending) before its content
 * is uploaded, so a sweep never removes an object another instance is writing; content whose last
 * reference went is removed by the sweep after a grace period, not by the release itself.
 */
import type { Kysely } from 'kysely';
import type { NamedMigration } from '../migrations.js';

// biome-ignore lint/suspicious/noExplicitAny: migrations run on any schema version
type AnyDb = Kysely<any>;

const migration: NamedMigration = {
  name: '0730_blob_states',
  async up(db: AnyDb) {
    // pending (being written) | ready | deleting (claimed by a sweep)
    await db.schema
      .alterTable('library_blobs')
      .addColumn('state', 'text', (c) => c.notNull().defaultTo('ready'))
      .execute();
    // When the state or the count last changed: a pending row's writer refreshes it; refs 0 ages from it.
    await db.schema
      .alterTable('library_blobs')
      .addColumn('touched_at', 'bigint', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.createIndex('library_blobs_sweep').on('library_blobs').columns(['refs', 'touched_at']).execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropIndex('library_blobs_sweep').execute();
    await db.schema.alterTable('library_blobs').dropColumn('touched_at').execute();
    await db.schema.alterTable('library_blobs').dropColumn('state').execute();
  },
};

export default migration;
