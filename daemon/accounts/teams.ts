/**
 * Deleting a team. Its members stay, without a team; everything keyed by the team id goes in the same
 * transaction: the team's limits (an app_settings row no foreign key reaches). Library items and
 * pipelines shared with the team keep their `team` scope: sharing follows the owner (sharing.ts), as
 * when an admin moves a member to another team, so they are private in effect until the owner joins one.
 */
import type { Kysely } from 'kysely';
import { bumpCredentials } from '../auth/credentials-version.js';
import type { Database } from '../store/schema.js';
import { teamLimitsKey } from './settings.js';

/** How team names compare: "Design", "design" and "DESIGN" (any Unicode form of each) are one name to people. */
function nameKey(name: string): string {
  return name.normalize('NFC').toLowerCase();
}

/**
 * The teams whose name is `name` up to letter case and Unicode form: teams are few, so they are compared
 * here rather than by the database's lower(), which folds only ASCII on SQLite. Exact matches first (two
 * case variants made before names were compared this way stay reachable by their exact names).
 */
export async function teamsNamed(db: Kysely<Database>, name: string, except?: string): Promise<{ id: string; name: string }[]> {
  const key = nameKey(name);
  const all = await db.selectFrom('teams').select(['id', 'name']).execute();
  const hits = all.filter((t) => t.id !== except && nameKey(t.name) === key);
  return hits.sort((a, b) => Number(b.name === name) - Number(a.name === name));
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
