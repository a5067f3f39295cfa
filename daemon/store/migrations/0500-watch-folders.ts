/** Watch folders an admin configures: a server folder, the pipeline run on every file, the owner of the jobs. */
import type { Kysely } from 'kysely';
import type { NamedMigration } from '../migrations.js';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against whatever schema the database has
type AnyDb = Kysely<any>;

const migration: NamedMigration = {
  name: '0500_watch_folders',
  async up(db: AnyDb) {
    await db.schema
      .createTable('watch_folders')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('path', 'text', (c) => c.notNull().unique())
      .addColumn('output_path', 'text', (c) => c.notNull())
      .addColumn('pipeline', 'text', (c) => c.notNull())
      .addColumn('owner_id', 'text', (c) => c.notNull())
      .addColumn('recursive', 'integer', (c) => c.notNull())
      .addColumn('keep', 'integer', (c) => c.notNull())
      .addColumn('stable_ms', 'integer', (c) => c.notNull())
      .addColumn('created_by', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('watch_folders').ifExists().execute();
  },
};

export default migration;
