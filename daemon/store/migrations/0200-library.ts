/** File library: content-addressed blobs, items, and their versions. */
import type { Kysely } from 'kysely';
import type { NamedMigration } from '../migrations.js';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against whatever schema the database has
type AnyDb = Kysely<any>;

const migration: NamedMigration = {
  name: '0200_library',
  async up(db: AnyDb) {
    await db.schema
      .createTable('library_blobs')
      .addColumn('hash', 'text', (c) => c.primaryKey())
      .addColumn('size', 'bigint', (c) => c.notNull())
      .addColumn('refs', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('library_items')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('owner_id', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('content_type', 'text', (c) => c.notNull())
      .addColumn('size', 'bigint', (c) => c.notNull())
      .addColumn('latest_version', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('library_items_owner').on('library_items').columns(['owner_id', 'updated_at']).execute();
    await db.schema
      .createTable('library_versions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('item_id', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('blob_hash', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('size', 'bigint', (c) => c.notNull())
      .addColumn('content_type', 'text', (c) => c.notNull())
      .addColumn('created_by', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('tool', 'text')
      .addColumn('settings', 'text')
      .addColumn('job_id', 'text')
      .addColumn('restored_from', 'integer')
      .addUniqueConstraint('library_versions_item_version', ['item_id', 'version'])
      .execute();
    await db.schema.createIndex('library_versions_blob').on('library_versions').column('blob_hash').execute();
  },
  async down(db: AnyDb) {
    for (const t of ['library_versions', 'library_items', 'library_blobs']) await db.schema.dropTable(t).ifExists().execute();
  },
};

export default migration;
