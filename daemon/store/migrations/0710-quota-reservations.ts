/**
 * Issue #21 item 6: bytes an upload has reserved against its owner's quota while it is being stored, so
 * parallel uploads cannot each see the same free room. A row lives from the reservation until the
 * content is recorded (or the upload fails); rows of a crashed process age out (daemon/library/quota.ts).
 */
import type { Kysely } from 'kysely';
import type { NamedMigration } from '../migrations.js';

// biome-ignore lint/suspicious/noExplicitAny: migrations run on any schema version
type AnyDb = Kysely<any>;

const migration: NamedMigration = {
  name: '0710_quota_reservations',
  async up(db: AnyDb) {
    await db.schema
      .createTable('quota_reservations')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('owner_id', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('bytes', 'bigint', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('quota_reservations_owner').on('quota_reservations').columns(['owner_id', 'kind']).execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('quota_reservations').ifExists().execute();
  },
};

export default migration;
