/**
 * One account per name whatever its letter case, held by the database. Registration looked for a case
 * variant and then inserted, with a password hash (scrypt, tens of milliseconds) in between: requests for
 * "bob", "Bob" and "BOB" sent at once each found none and made three accounts, while the unique index on
 * `username` only compares exact names. `username_key` is the lower-cased name (usernames are ASCII, so
 * lower() folds alike on SQLite and PostgreSQL) under a unique index; of case variants made before this
 * migration only the oldest gets its key, the others keep working with none (NULLs never collide).
 */
import { sql, type Kysely } from 'kysely';
import type { NamedMigration } from '../migrations.js';

// biome-ignore lint/suspicious/noExplicitAny: migrations run on any schema version
type AnyDb = Kysely<any>;

const migration: NamedMigration = {
  name: '0770_username_case',
  async up(db: AnyDb) {
    await db.schema.alterTable('users').addColumn('username_key', 'text').execute();
    await sql`update users set username_key = lower(username) where not exists (
      select 1 from users o where lower(o.username) = lower(users.username)
        and (o.created_at < users.created_at or (o.created_at = users.created_at and o.id < users.id)))`.execute(db);
    // Not users_username_key: PostgreSQL already gave that name to the unique constraint on username.
    await db.schema.createIndex('users_name_case').unique().on('users').column('username_key').execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropIndex('users_name_case').ifExists().execute();
    await db.schema.alterTable('users').dropColumn('username_key').execute();
  },
};

export default migration;
