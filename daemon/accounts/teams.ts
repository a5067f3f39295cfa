/**
 * Team names and deleting a team. A name is one whatever its letter case or Unicode form: the look-up
 * before a write gives the helpful answer, and the unique `name_key` (migration 0790) holds the rule when
 * two writes race, as they did (two of five case variants created at once were both made, on SQLite and
 * PostgreSQL; two of one exact name answered 500).
 *
 * Deleting a team: its members stay, without a team; everything keyed by the team id goes in the same
 * transaction: the team's limits (an app_settings row no foreign key reaches). Library items and
 * pipelines shared with the team keep their `team` scope: sharing follows the owner (sharing.ts), as
 * when an admin moves a member to another team, so they are private in effect until the owner joins one.
 */
import type { Kysely } from 'kysely';
import { KilnError } from '../../src/core/errors.js';
import { bumpCredentials } from '../auth/credentials-version.js';
import { newId } from '../auth/secrets.js';
import type { Database } from '../store/schema.js';
import { teamLimitsKey } from './settings.js';

/** How team names compare: "Design", "design" and "DESIGN" (any Unicode form of each) are one name to people. */
export function teamNameKey(name: string): string {
  return name.normalize('NFC').toLowerCase();
}

/**
 * The teams whose name is `name` up to letter case and Unicode form: teams are few, so they are compared
 * here rather than by the database's lower(), which folds only ASCII on SQLite. Exact matches first (two
 * case variants made before names were compared this way stay reachable by their exact names).
 */
export async function teamsNamed(db: Kysely<Database>, name: string, except?: string): Promise<{ id: string; name: string }[]> {
  const key = teamNameKey(name);
  const all = await db.selectFrom('teams').select(['id', 'name']).execute();
  const hits = all.filter((t) => t.id !== except && teamNameKey(t.name) === key);
  return hits.sort((a, b) => Number(b.name === name) - Number(a.name === name));
}

/** CONFLICT when another team (not `except`) has this name up to case and Unicode form. */
async function nameTaken(db: Kysely<Database>, name: string, except?: string): Promise<void> {
  const [other] = await teamsNamed(db, name, except);
  if (other)
    throw new KilnError(
      'CONFLICT',
      `A team named ${other.name} exists${other.name !== name ? ` (names differing only in case are one name)` : ''}.`,
    );
}

/**
 * Runs a write of `name` once no other team has it; a write the database refused because one made it
 * meanwhile (the unique name_key) is answered as the look-up would have.
 */
async function writeName(db: Kysely<Database>, name: string, except: string | undefined, write: () => Promise<unknown>): Promise<void> {
  await nameTaken(db, name, except);
  try {
    await write();
  } catch (e) {
    await nameTaken(db, name, except);
    throw e;
  }
}

/** Makes a team of this name; its id. */
export async function createTeam(db: Kysely<Database>, name: string): Promise<string> {
  const id = newId();
  await writeName(db, name, undefined, () =>
    db
      .insertInto('teams')
      .values({ id, name, name_key: teamNameKey(name), created_at: Date.now() })
      .execute(),
  );
  return id;
}

export async function renameTeam(db: Kysely<Database>, id: string, name: string): Promise<void> {
  await writeName(db, name, id, () =>
    db
      .updateTable('teams')
      .set({ name, name_key: teamNameKey(name) })
      .where('id', '=', id)
      .execute(),
  );
}

export async function deleteTeam(db: Kysely<Database>, id: string): Promise<void> {
  await db.transaction().execute(async (tx) => {
    // The team row first: on PostgreSQL its lock orders this after a limits write under way (settings.ts),
    // whose row the delete below then sees.
    await tx.deleteFrom('teams').where('id', '=', id).execute();
    await tx.updateTable('users').set({ team_id: null, updated_at: Date.now() }).where('team_id', '=', id).execute();
    await tx.deleteFrom('app_settings').where('key', '=', teamLimitsKey(id)).execute();
    // Cached API-key verifications (in every instance) carry the members' old team, and with it its limits.
    await bumpCredentials(tx);
  });
}
