/** Issue #16: how many times a (username, address) pair has been locked, so each next lock lasts longer. */
import type { Kysely } from 'kysely';
import type { NamedMigration } from '../migrations.js';

// biome-ignore lint/suspicious/noExplicitAny: migrations run on any schema version
type AnyDb = Kysely<any>;

const migration: NamedMigration = {
  name: '0600_hardening',
  async up(db: AnyDb) {
    await db.schema
      .alterTable('login_throttle')
      .addColumn('locks', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.alterTable('login_throttle').dropColumn('locks').execute();
  },
};

export default migration;
