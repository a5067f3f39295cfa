/** Saved pipelines (plain JSON definitions, owned by a user). */
import type { Kysely } from 'kysely';
import type { NamedMigration } from '../migrations.js';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against whatever schema the database has
type AnyDb = Kysely<any>;

const migration: NamedMigration = {
  name: '0201_pipelines',
  async up(db: AnyDb) {
    await db.schema
      .createTable('pipelines')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('owner_id', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('definition', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addUniqueConstraint('pipelines_owner_name', ['owner_id', 'name'])
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('pipelines').ifExists().execute();
  },
};

export default migration;
