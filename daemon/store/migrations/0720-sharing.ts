/** Issue #22: library items and pipelines are `private` to their owner or shared with the owner's `team`. */
import type { Kysely } from 'kysely';
import type { NamedMigration } from '../migrations.js';

// biome-ignore lint/suspicious/noExplicitAny: migrations run on any schema version
type AnyDb = Kysely<any>;

const TABLES = ['library_items', 'pipelines'];

const migration: NamedMigration = {
  name: '0720_sharing',
  async up(db: AnyDb) {
    for (const t of TABLES)
      await db.schema
        .alterTable(t)
        .addColumn('scope', 'text', (c) => c.notNull().defaultTo('private'))
        .execute();
  },
  async down(db: AnyDb) {
    for (const t of TABLES) await db.schema.alterTable(t).dropColumn('scope').execute();
  },
};

export default migration;
