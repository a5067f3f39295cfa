/**
 * Issues #21/#22 (accounts): service accounts and disabled users, API keys that remember why they stopped
 * working (revoked, rotated out with a grace period), and the credentials version other processes compare
 * against their caches.
 */
import type { Kysely } from 'kysely';
import type { NamedMigration } from '../migrations.js';

// biome-ignore lint/suspicious/noExplicitAny: migrations run on any schema version
type AnyDb = Kysely<any>;

const migration: NamedMigration = {
  name: '0700_accounts',
  async up(db: AnyDb) {
    await db.schema
      .alterTable('users')
      .addColumn('service', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.alterTable('users').addColumn('disabled_at', 'bigint').execute();
    await db.schema.alterTable('api_keys').addColumn('revoked_at', 'bigint').execute();
    // A rotated-out secret: the key (id) it was replaced by, and the end of its grace period.
    await db.schema.alterTable('api_keys').addColumn('replaced_by', 'text').execute();
    await db.schema.alterTable('api_keys').addColumn('valid_until', 'bigint').execute();
    await db.schema
      .createTable('credentials_version')
      .addColumn('id', 'integer', (c) => c.primaryKey())
      .addColumn('version', 'bigint', (c) => c.notNull())
      .execute();
    await db.insertInto('credentials_version').values({ id: 1, version: 1 }).execute();
    await db.schema.createIndex('login_throttle_first_at').on('login_throttle').column('first_at').execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropIndex('login_throttle_first_at').ifExists().execute();
    await db.schema.dropTable('credentials_version').ifExists().execute();
    for (const col of ['valid_until', 'replaced_by', 'revoked_at']) await db.schema.alterTable('api_keys').dropColumn(col).execute();
    for (const col of ['disabled_at', 'service']) await db.schema.alterTable('users').dropColumn(col).execute();
  },
};

export default migration;
