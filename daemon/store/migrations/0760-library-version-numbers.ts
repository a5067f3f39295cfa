/**
 * Library version numbers are never given twice. The next number was max(version) + 1, so after the
 * newest version was deleted its number went to the next upload: "version 5" then named other content
 * than before. Each item now keeps the highest number it ever gave (`top_version`); items made before
 * start from their highest surviving version (a number deleted earlier cannot be recovered).
 */
import { sql, type Kysely } from 'kysely';
import type { NamedMigration } from '../migrations.js';

// biome-ignore lint/suspicious/noExplicitAny: migrations run on any schema version
type AnyDb = Kysely<any>;

const migration: NamedMigration = {
  name: '0760_library_version_numbers',
  async up(db: AnyDb) {
    await db.schema
      .alterTable('library_items')
      .addColumn('top_version', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await sql`update library_items set top_version = coalesce(
      (select max(v.version) from library_versions v where v.item_id = library_items.id), latest_version)`.execute(db);
  },
  async down(db: AnyDb) {
    await db.schema.alterTable('library_items').dropColumn('top_version').execute();
  },
};

export default migration;
