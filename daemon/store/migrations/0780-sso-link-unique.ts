/**
 * One local account per SSO identity, held by the database. The link (provider, subject) was looked up
 * and, when missing, a user created and linked in separate steps: two first sign-ins of one person at
 * once (two tabs, a double click on the IdP's button) each found no link and made an account, and later
 * sign-ins landed on either. The index on the link becomes unique; of accounts linked to one identity
 * before, the oldest keeps the link (the one sign-ins found first) and the others lose it: they stay,
 * with what they own, for an admin to delete.
 */
import { sql, type Kysely } from 'kysely';
import type { NamedMigration } from '../migrations.js';

// biome-ignore lint/suspicious/noExplicitAny: migrations run on any schema version
type AnyDb = Kysely<any>;

const migration: NamedMigration = {
  name: '0780_sso_link_unique',
  async up(db: AnyDb) {
    await sql`update users set sso_provider = null, sso_subject = null where sso_subject is not null and exists (
      select 1 from users o where o.sso_provider = users.sso_provider and o.sso_subject = users.sso_subject
        and (o.created_at < users.created_at or (o.created_at = users.created_at and o.id < users.id)))`.execute(db);
    await db.schema.dropIndex('users_sso').execute();
    await db.schema.createIndex('users_sso').unique().on('users').columns(['sso_provider', 'sso_subject']).execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropIndex('users_sso').execute();
    await db.schema.createIndex('users_sso').on('users').columns(['sso_provider', 'sso_subject']).execute();
  },
};

export default migration;
