/**
 * A fresh SQLite database in a temp dir driven migration by migration, for tests of what one migration
 * does to rows written before it: `to(name)` migrates up or down to `name` and fails on an error.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect } from 'kysely';
import { migrationProvider } from '../../daemon/store/migrations.js';
import { tempDir } from './fixtures.js';

/** Tables of any migration step: typed by no one schema. */
export function migrationDb(): { db: Kysely<any>; to(name: string): Promise<void> } {
  const db = new Kysely<any>({ dialect: new SqliteDialect({ database: new Database(path.join(tempDir('kiln-mig-'), 'kiln.db')) }) });
  const migrator = new Migrator({ db, provider: migrationProvider });
  return {
    db,
    async to(name) {
      const r = await migrator.migrateTo(name);
      assert.equal(r.error, undefined, String(r.error));
    },
  };
}
