/**
 * One team per name whatever its letter case or Unicode form, held by the database. Creating or renaming
 * a team looked for a variant and then wrote: five variants of one name created at once made two teams
 * (SQLite and PostgreSQL alike), and two requests with one exact name answered 500 from the unique index
 * on `name`, which compares exact names only. `name_key` is the name in NFC, lower-cased, under a unique
 * index. It is computed here rather than by the database (SQLite's lower() folds only ASCII, and neither
 * database normalises Unicode forms); of variants made before this migration only the oldest gets its
 * key, the others keep working with none (NULLs never collide).
 */
import type { Kysely } from 'kysely';
import { teamNameKey } from '../../accounts/teams.js';
import type { NamedMigration } from '../migrations.js';

// biome-ignore lint/suspicious/noExplicitAny: migrations run on any schema version
type AnyDb = Kysely<any>;

const migration: NamedMigration = {
  name: '0790_team_name_case',
  async up(db: AnyDb) {
    await db.schema.alterTable('teams').addColumn('name_key', 'text').execute();
    const teams: { id: string; name: string }[] = await db
      .selectFrom('teams')
      .select(['id', 'name'])
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    const keyed = new Set<string>();
    for (const t of teams) {
      const key = teamNameKey(t.name);
      if (keyed.has(key)) continue;
      keyed.add(key);
      await db.updateTable('teams').set({ name_key: key }).where('id', '=', t.id).execute();
    }
    await db.schema.createIndex('teams_name_case').unique().on('teams').column('name_key').execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropIndex('teams_name_case').ifExists().execute();
    await db.schema.alterTable('teams').dropColumn('name_key').execute();
  },
};

export default migration;
