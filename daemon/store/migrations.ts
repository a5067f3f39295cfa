/**
 * The one ordered list of schema migrations, for SQLite and PostgreSQL alike. To add one: a file
 * `migrations/<NNNN>-<name>.ts` exporting a NamedMigration whose name is `<NNNN>_<name>` (the next
 * number), and one line appended to `migrations/list.ts`. Never edit an applied migration. Use only
 * portable column types: text, integer, bigint (epoch-ms timestamps), and text for JSON.
 */
import type { Migration, MigrationProvider } from 'kysely';
import * as all from './migrations/list.js';

export interface NamedMigration extends Migration {
  name: string;
}

export const MIGRATIONS: NamedMigration[] = (Object.values(all) as NamedMigration[]).sort((a, b) => a.name.localeCompare(b.name));

for (let i = 1; i < MIGRATIONS.length; i++) {
  if (MIGRATIONS[i]!.name === MIGRATIONS[i - 1]!.name) throw new Error(`duplicate migration ${MIGRATIONS[i]!.name}`);
}

/** Feeds MIGRATIONS to kysely's Migrator, which records applied names and (on PostgreSQL) takes a lock. */
export const migrationProvider: MigrationProvider = {
  async getMigrations() {
    return Object.fromEntries(MIGRATIONS.map((m) => [m.name, m]));
  },
};
