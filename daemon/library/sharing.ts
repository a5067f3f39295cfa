/**
 * Sharing with a team (issue #22). A library item or a saved pipeline has a `scope`: `private` (its
 * owner only, the default) or `team` (also every member of the owner's current team). Roles with
 * files:all / pipelines:all see everything. Seeing is not changing: only the owner and admins rename,
 * add versions, change the scope or delete. A teammate who tries gets 403 (it sees the record anyway);
 * anyone else gets 404, so private records stay undisclosed.
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { KilnError } from '../../src/core/errors.js';
import type { Database, Role } from '../store/schema.js';

export const SCOPES = ['private', 'team'] as const;
export type Scope = (typeof SCOPES)[number];
/** The list filter: `all` (default) is everything the viewer may see. */
export const SCOPE_FILTERS = ['all', 'private', 'team'] as const;
export type ScopeFilter = (typeof SCOPE_FILTERS)[number];

/** Who is asking. `teamId` is looked up when not given (the local CLI's viewer carries none). */
export interface Sharer {
  id: string;
  role: Role;
  teamId?: string | null;
}

/** How a viewer reaches a record it may see. */
export type Access = 'owner' | 'admin' | 'team';

function invalid(message: string, path: string): KilnError {
  return new KilnError('VALIDATION_ERROR', message, { details: [{ path, message }] });
}

/** A `scope` sent by a client; undefined when absent. */
export function parseScope(raw: unknown): Scope | undefined {
  if (raw === undefined || raw === null || raw === '') return undefined;
  if (typeof raw === 'string' && (SCOPES as readonly string[]).includes(raw)) return raw as Scope;
  throw invalid(`scope must be one of ${SCOPES.join(', ')} (got ${JSON.stringify(raw)}).`, 'scope');
}

/** The `scope` query parameter of a list route (default: all). */
export function parseScopeFilter(raw: unknown): ScopeFilter {
  if (raw === undefined || raw === '') return 'all';
  if (typeof raw === 'string' && (SCOPE_FILTERS as readonly string[]).includes(raw)) return raw as ScopeFilter;
  throw invalid(`scope must be one of ${SCOPE_FILTERS.join(', ')} (got ${JSON.stringify(raw)}).`, 'scope');
}

export async function teamOf(db: Kysely<Database>, userId: string): Promise<string | null> {
  const u = await db.selectFrom('users').select('team_id').where('id', '=', userId).executeTakeFirst();
  return u?.team_id ?? null;
}

async function viewerTeam(db: Kysely<Database>, v: Sharer): Promise<string | null> {
  return v.teamId !== undefined ? v.teamId : teamOf(db, v.id);
}

/**
 * The condition (on a table with `owner_id` and `scope`) selecting what `filter` asks for among the
 * rows the viewer may see. Team rows are those of owners in the viewer's team now: sharing follows
 * the owner when an admin moves them to another team.
 */
export async function scopeCondition(
  db: Kysely<Database>,
  viewer: Sharer,
  seesAll: boolean,
  filter: ScopeFilter,
): Promise<RawBuilder<boolean> | undefined> {
  if (seesAll) return filter === 'all' ? undefined : sql<boolean>`scope = ${filter}`;
  const team = await viewerTeam(db, viewer);
  const mine = sql<boolean>`owner_id = ${viewer.id}`;
  const teams = team
    ? sql<boolean>`(scope = 'team' and owner_id in (select id from users where team_id = ${team}))`
    : sql<boolean>`(scope = 'team' and owner_id = ${viewer.id})`;
  if (filter === 'private') return sql<boolean>`(${mine} and scope = 'private')`;
  if (filter === 'team') return teams;
  return sql<boolean>`(${mine} or ${teams})`;
}

/** How the viewer reaches `row`, or undefined when it may not see it at all. */
export async function accessTo(
  db: Kysely<Database>,
  row: { owner_id: string; scope: string },
  viewer: Sharer,
  seesAll: boolean,
): Promise<Access | undefined> {
  if (row.owner_id === viewer.id) return 'owner';
  if (seesAll) return 'admin';
  if (row.scope !== 'team') return undefined;
  const team = await viewerTeam(db, viewer);
  return team && (await teamOf(db, row.owner_id)) === team ? 'team' : undefined;
}

/** The refusal a teammate gets for changing what it may only use. */
export function onlyOwnerChanges(what: string): KilnError {
  return new KilnError('FORBIDDEN', `${what} is shared with your team: only its owner or an admin may change or delete it.`);
}

/** Sharing with the team needs a team: refused, with the way out, when the owner has none. */
export async function checkScopeFor(db: Kysely<Database>, ownerId: string, scope: Scope): Promise<void> {
  if (scope === 'team' && !(await teamOf(db, ownerId)))
    throw invalid(
      "scope team: the owner belongs to no team, so there is no one to share with (an admin sets a user's team with PUT /api/auth/users/:id).",
      'scope',
    );
}
