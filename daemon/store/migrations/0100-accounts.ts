/** Accounts: teams, MFA, SSO links, key expiry, login throttling, settings, branding assets, audit log. */
import type { Kysely } from 'kysely';
import type { NamedMigration } from '../migrations.js';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against whatever schema the database has
type AnyDb = Kysely<any>;

const migration: NamedMigration = {
  name: '0100_accounts',
  async up(db: AnyDb) {
    // SQLite adds one column per ALTER TABLE.
    for (const [col, type] of [
      ['mfa_secret', 'text'],
      ['mfa_pending_secret', 'text'],
      ['mfa_last_step', 'bigint'],
      ['sso_provider', 'text'],
      ['sso_subject', 'text'],
    ] as const) {
      await db.schema.alterTable('users').addColumn(col, type).execute();
    }
    await db.schema
      .alterTable('users')
      .addColumn('mfa_enabled', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.createIndex('users_sso').on('users').columns(['sso_provider', 'sso_subject']).execute();
    await db.schema.alterTable('api_keys').addColumn('expires_at', 'bigint').execute();
    await db.schema
      .createTable('teams')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull().unique())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('mfa_recovery_codes')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('code_hash', 'text', (c) => c.notNull())
      .addColumn('used_at', 'bigint')
      .execute();
    await db.schema.createIndex('mfa_recovery_user').on('mfa_recovery_codes').column('user_id').execute();
    await db.schema
      .createTable('mfa_challenges')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('login_throttle')
      .addColumn('key', 'text', (c) => c.primaryKey())
      .addColumn('failures', 'integer', (c) => c.notNull())
      .addColumn('first_at', 'bigint', (c) => c.notNull())
      .addColumn('locked_until', 'bigint')
      .execute();
    await db.schema
      .createTable('sso_requests')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('data', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('app_settings')
      .addColumn('key', 'text', (c) => c.primaryKey())
      .addColumn('value', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('audit_events')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('at', 'bigint', (c) => c.notNull())
      .addColumn('event', 'text', (c) => c.notNull())
      .addColumn('actor_id', 'text')
      .addColumn('actor_name', 'text')
      .addColumn('target', 'text')
      .addColumn('ip', 'text')
      .addColumn('details', 'text')
      .execute();
    await db.schema.createIndex('audit_events_at').on('audit_events').column('at').execute();
  },
};

export default migration;
