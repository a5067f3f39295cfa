/**
 * User administration and the authority rules (docs/ACCOUNTS.md):
 * - every user-management action needs users:manage;
 * - proposed-role authority: nobody creates or promotes to a role ranked above its own;
 * - target authority: nobody acts on a user ranked above itself, and a user without users:manage never
 *   acts on another user at all (only on itself through change-password and the MFA routes);
 * - the last admin can be neither demoted nor deleted.
 * Deleting a user deletes its sessions, API keys, MFA data, its jobs with their outputs, and its library
 * files and pipelines: nothing is handed to another user.
 */
import { rm } from 'node:fs/promises';
import { type Kysely, PostgresAdapter } from 'kysely';
import { KilnError } from '../../src/core/errors.js';
import type { AuthUser, Authenticator } from '../auth/authenticate.js';
import { roleHas } from '../auth/permissions.js';
import { initialPasswordCleanup } from '../auth/bootstrap.js';
import { bumpCredentials } from '../auth/credentials-version.js';
import { hashPassword, normalizePassword } from '../auth/secrets.js';
import { revokeUserKeys } from '../store/api-keys.js';
import type { Database, Role, UsersTable } from '../store/schema.js';
import { type JobRow, UNFINISHED } from '../store/jobs.js';
import { createUser, findUserById, findUserByNameAnyCase, LOCAL_OWNER } from '../store/users.js';
import { onlyFields } from './body.js';
import { ROLE_RANK } from './schema.js';
import { teamsNamed } from './teams.js';

export const ROLES: Role[] = ['admin', 'user'];

export interface UserView {
  id: string;
  username: string;
  role: Role;
  team: { id: string; name: string } | null;
  mfaEnabled: boolean;
  sso: string | null;
  /** A service account: no password, no MFA, keys issued by an admin. */
  service: boolean;
  disabled: boolean;
  createdAt: string;
}

export async function userView(db: Kysely<Database>, u: UsersTable): Promise<UserView> {
  const team = u.team_id ? await db.selectFrom('teams').select(['id', 'name']).where('id', '=', u.team_id).executeTakeFirst() : undefined;
  return {
    id: u.id,
    username: u.username,
    role: u.role,
    team: team ?? null,
    mfaEnabled: Number(u.mfa_enabled ?? 0) === 1,
    sso: u.sso_provider ?? null,
    service: Number(u.service ?? 0) === 1,
    disabled: u.disabled_at != null,
    createdAt: new Date(Number(u.created_at)).toISOString(),
  };
}

export async function listUsers(db: Kysely<Database>): Promise<UserView[]> {
  const rows = await db.selectFrom('users').selectAll().orderBy('created_at').execute();
  const teams = new Map((await db.selectFrom('teams').select(['id', 'name']).execute()).map((t) => [t.id, t]));
  return rows.map((u) => ({
    id: u.id,
    username: u.username,
    role: u.role,
    team: (u.team_id && teams.get(u.team_id)) || null,
    mfaEnabled: Number(u.mfa_enabled ?? 0) === 1,
    sso: u.sso_provider ?? null,
    service: Number(u.service ?? 0) === 1,
    disabled: u.disabled_at != null,
    createdAt: new Date(Number(u.created_at)).toISOString(),
  }));
}

/**
 * Minimum strength: at least 10 characters, 5 of them different, and not built around the username.
 * Characters are Unicode code points of the normalised password (an emoji is one, not two UTF-16 units).
 */
export function checkPasswordStrength(typed: string, username: string, field = 'password'): void {
  const password = normalizePassword(typed);
  const needs: string[] = [];
  const length = [...password].length;
  if (length < 10) needs.push('at least 10 characters');
  if (length > 1000) needs.push('at most 1000 characters');
  if (new Set(password).size < 5) needs.push('at least 5 different characters');
  const hasName = username.length >= 3 && password.toLowerCase().includes(username.toLowerCase());
  const parts = [...(needs.length ? [`it needs ${needs.join(', ')}`] : []), ...(hasName ? ['it must not contain the username'] : [])];
  if (parts.length)
    throw new KilnError('VALIDATION_ERROR', `The ${field} is too weak: ${parts.join('; ')}.`, {
      details: [{ path: field, message: [...needs, ...(hasName ? ['must not contain the username'] : [])].join(', ') }],
    });
}

export function checkUsername(username: unknown): string {
  if (typeof username !== 'string' || !/^[A-Za-z0-9._@+-]{1,100}$/.test(username)) {
    throw new KilnError('VALIDATION_ERROR', 'username must be 1-100 characters of letters, digits and . _ @ + -.', {
      details: [{ path: 'username', message: 'invalid' }],
    });
  }
  return username;
}

export function parseRole(role: unknown): Role {
  if (typeof role !== 'string' || !(ROLES as string[]).includes(role)) {
    throw new KilnError('VALIDATION_ERROR', `role must be one of ${ROLES.join(', ')}.`, {
      details: [{ path: 'role', message: 'invalid' }],
    });
  }
  return role as Role;
}

/** Proposed-role authority. */
export function requireRoleAuthority(actor: AuthUser, role: Role): void {
  if (ROLE_RANK[role] > ROLE_RANK[actor.role])
    throw new KilnError('FORBIDDEN', `The role ${actor.role} may not give the role ${role}, which ranks above it.`, {
      details: { permission: 'users:manage', role },
    });
}

/** Target authority: the target must exist and rank no higher than the actor; users act only on themselves. */
export async function requireTarget(db: Kysely<Database>, actor: AuthUser, id: string): Promise<UsersTable> {
  const target = await findUserById(db, id);
  if (!target) throw new KilnError('NOT_FOUND', `No user ${id}.`);
  if (target.id !== actor.id && !roleHas(actor.role, 'users:manage')) {
    throw new KilnError('FORBIDDEN', 'A user may not act on another user.', { details: { permission: 'users:manage' } });
  }
  if (ROLE_RANK[target.role] > ROLE_RANK[actor.role])
    throw new KilnError('FORBIDDEN', `The role ${actor.role} may not act on a user with the role ${target.role}.`, {
      details: { permission: 'users:manage' },
    });
  return target;
}

/**
 * The admin resets (`…/reset-password`, `…/mfa/reset`) act on other users only: on one's own account
 * they would skip what the self-service routes ask for (the current password, a code), so a leaked
 * admin API key or a stolen session could take the account over. Oneself goes through
 * change-password and mfa/disable; a locked-out admin through another admin or `kiln admin` on the host.
 */
export function refuseSelfReset(actor: AuthUser, target: UsersTable, instead: string): void {
  if (target.id !== actor.id) return;
  throw new KilnError('FORBIDDEN', `An admin reset does not apply to your own account: use ${instead}.`, { reason: 'self-reset' });
}

/**
 * The last enabled admin is neither demoted, disabled nor deleted. Disabled admins do not count: with
 * one, the only enabled admin could demote or delete itself and leave nobody able to administer.
 * Called again inside the transaction that writes (`db` is then that transaction), the enabled admins'
 * rows locked FOR UPDATE on PostgreSQL, in id order (SQLite has one writer): two demotions at once
 * cannot each count the other as the admin that stays.
 */
async function requireNotLastAdmin(db: Kysely<Database>, target: UsersTable, what: string): Promise<void> {
  if (target.role !== 'admin' || target.disabled_at != null) return;
  let admins = db.selectFrom('users').select('id').where('role', '=', 'admin').where('disabled_at', 'is', null).orderBy('id');
  if (db.getExecutor().adapter instanceof PostgresAdapter) admins = admins.forUpdate();
  if (!(await admins.execute()).some((a) => a.id !== target.id))
    throw new KilnError('CONFLICT', `${target.username} is the last admin and cannot be ${what}; make another user admin first.`);
}

export async function resolveTeam(db: Kysely<Database>, team: unknown): Promise<string | null> {
  if (team === null || team === '') return null;
  if (typeof team !== 'string')
    throw new KilnError('VALIDATION_ERROR', 'team must be a team id or name, or null.', {
      details: [{ path: 'team', message: 'invalid' }],
    });
  const byId = await db.selectFrom('teams').select('id').where('id', '=', team).executeTakeFirst();
  if (byId) return byId.id;
  // By name in any case or Unicode form, as team names are unique (routes/teams.ts); of older case
  // variants the exact name wins, and a name that only matches several of them is ambiguous.
  const named = await teamsNamed(db, team);
  if (named.length > 1 && named[0]!.name !== team)
    throw new KilnError(
      'CONFLICT',
      `Several teams are named ${team} up to letter case (${named.map((t) => t.name).join(', ')}): give the team's id.`,
    );
  if (!named[0]) throw new KilnError('NOT_FOUND', `No team ${team}.`);
  return named[0].id;
}

export async function registerUser(db: Kysely<Database>, actor: AuthUser, body: Record<string, unknown>): Promise<UsersTable> {
  onlyFields(body, ['username', 'password', 'role', 'team', 'service'], 'a new user');
  const username = checkUsername(body.username);
  const role = body.role === undefined ? 'user' : parseRole(body.role);
  requireRoleAuthority(actor, role);
  if (body.service !== undefined && typeof body.service !== 'boolean')
    throw new KilnError('VALIDATION_ERROR', 'service must be true or false.', { details: [{ path: 'service', message: 'invalid' }] });
  const service = body.service === true;
  if (service && body.password !== undefined)
    throw new KilnError('VALIDATION_ERROR', 'A service account has no password: it works with API keys an admin issues for it.', {
      details: [{ path: 'password', message: 'not allowed for a service account' }],
    });
  if (!service && typeof body.password !== 'string')
    throw new KilnError('VALIDATION_ERROR', 'password is required (a string).', { details: [{ path: 'password', message: 'required' }] });
  if (!service) checkPasswordStrength(body.password as string, username);
  const teamId = body.team === undefined ? null : await resolveTeam(db, body.team);
  const taken = async () => {
    const other = await findUserByNameAnyCase(db, username);
    if (other)
      throw new KilnError(
        'CONFLICT',
        `The username ${username} is taken${other.username !== username ? ` (by ${other.username}: names differing only in case are one name)` : ''}.`,
      );
  };
  await taken();
  try {
    return await createUser(db, { username, password: service ? null : (body.password as string), role, teamId, service });
  } catch (e) {
    await taken();
    throw e;
  }
}

export async function updateUser(
  db: Kysely<Database>,
  auth: Pick<Authenticator, 'forgetUser'> | undefined,
  actor: AuthUser,
  id: string,
  body: Record<string, unknown>,
  /** Disabling stops the account's queued and running jobs (the offline CLI has none to stop). */
  jobs?: Pick<JobStopper, 'cancel'>,
): Promise<{ user: UsersTable; changes: Record<string, unknown> }> {
  const target = await requireTarget(db, actor, id);
  const patch: Partial<UsersTable> = {};
  const changes: Record<string, unknown> = {};
  onlyFields(body, ['role', 'team', 'disabled'], 'a user update');
  if (body.role !== undefined) {
    const role = parseRole(body.role);
    requireRoleAuthority(actor, role);
    if (role !== target.role) {
      if (role !== 'admin') await requireNotLastAdmin(db, target, 'demoted');
      patch.role = role;
      changes.role = { from: target.role, to: role };
    }
  }
  if (body.team !== undefined) {
    const teamId = await resolveTeam(db, body.team);
    if (teamId !== target.team_id) {
      patch.team_id = teamId;
      changes.team = { from: target.team_id, to: teamId };
    }
  }
  if (body.disabled !== undefined) {
    if (typeof body.disabled !== 'boolean')
      throw new KilnError('VALIDATION_ERROR', 'disabled must be true or false.', { details: [{ path: 'disabled', message: 'invalid' }] });
    if (body.disabled !== (target.disabled_at != null)) {
      if (body.disabled) {
        if (target.id === actor.id) throw new KilnError('CONFLICT', 'You cannot disable your own account.');
        await requireNotLastAdmin(db, target, 'disabled');
      }
      patch.disabled_at = body.disabled ? Date.now() : null;
      changes.disabled = body.disabled;
    }
  }
  if (Object.keys(patch).length) {
    await db.transaction().execute(async (tx) => {
      if (patch.role !== undefined && patch.role !== 'admin') await requireNotLastAdmin(tx, target, 'demoted');
      else if (patch.disabled_at) await requireNotLastAdmin(tx, target, 'disabled');
      await tx
        .updateTable('users')
        .set({ ...patch, updated_at: Date.now() })
        .where('id', '=', id)
        .execute();
      if (patch.disabled_at) {
        await tx.deleteFrom('sessions').where('user_id', '=', id).execute();
        // A sign-in waiting for its second factor would otherwise still end in a session.
        await tx.deleteFrom('mfa_challenges').where('user_id', '=', id).execute();
      }
      // Cached API-key verifications (in every instance) carry the old role and standing.
      await bumpCredentials(tx);
    });
    auth?.forgetUser(id);
    // A disabled account's work stops with its sessions: its jobs went on running (queued ones
    // started later) and delivered outputs for an account nobody may use any more.
    if (patch.disabled_at && jobs) changes.jobsCancelled = await cancelUnfinishedJobs(db, jobs, id);
  }
  return { user: (await findUserById(db, id))!, changes };
}

/** Sets a new password and signs the user out everywhere except `keepSessionId`, and revokes its own API keys. */
export async function setPassword(
  db: Kysely<Database>,
  auth: Pick<Authenticator, 'forgetUser'> | undefined,
  user: UsersTable,
  password: string,
  keepSessionId?: string,
  /** The data dir: a generated initial-admin-password file holding this user's old password is removed. */
  dataDir?: string,
): Promise<void> {
  if (Number(user.service ?? 0) === 1)
    throw new KilnError('CONFLICT', `${user.username} is a service account: it has no password (rotate or revoke its API keys instead).`, {
      reason: 'service-account',
    });
  checkPasswordStrength(password, user.username, 'newPassword');
  const hash = await hashPassword(password);
  const dropInitial = dataDir ? await initialPasswordCleanup(dataDir, user.password_hash) : undefined;
  await db.transaction().execute(async (tx) => {
    await tx.updateTable('users').set({ password_hash: hash, updated_at: Date.now() }).where('id', '=', user.id).execute();
    let q = tx.deleteFrom('sessions').where('user_id', '=', user.id);
    if (keepSessionId) q = q.where('id', '!=', keepSessionId);
    await q.execute();
    // Only this person's own keys: service accounts own theirs, so a reset never touches CI keys.
    await revokeUserKeys(tx, user.id);
    await tx.deleteFrom('mfa_challenges').where('user_id', '=', user.id).execute();
  });
  await dropInitial?.();
  auth?.forgetUser(user.id);
}

/** What deleting needs from the job service; the offline CLI passes none (no runs to stop, work dirs from the records). */
export interface JobStopper {
  cancel(row: JobRow): Promise<unknown>;
  /** Removes what the job kept: its directory and, with object storage, its objects (the sweep goes by records). */
  removeFiles(row: JobRow): Promise<void>;
}

/** Cancels the user's queued and running jobs; how many were still unfinished. */
async function cancelUnfinishedJobs(db: Kysely<Database>, jobs: Pick<JobStopper, 'cancel'>, userId: string): Promise<number> {
  const open = await db.selectFrom('jobs').selectAll().where('owner_id', '=', userId).where('status', 'in', UNFINISHED).execute();
  for (const j of open) await jobs.cancel(j).catch(() => {});
  return open.length;
}

/** Deletes the user's library items (through the library, which releases their stored content) and pipelines. */
async function deleteOwnedLibrary(db: Kysely<Database>, sharedDir: string, userId: string): Promise<{ files: number; pipelines: number }> {
  const { LibraryService } = await import('../library/service.js');
  const library = new LibraryService(db, sharedDir, 0);
  const items = await db.selectFrom('library_items').select('id').where('owner_id', '=', userId).execute();
  // Acting as the owner: the library's own rules, no admin bypass needed.
  for (const it of items) await library.deleteItem({ id: userId, role: 'user' }, it.id);
  const r = await db.deleteFrom('pipelines').where('owner_id', '=', userId).executeTakeFirst();
  return { files: items.length, pipelines: Number(r.numDeletedRows) };
}

/**
 * Library items and pipelines whose owner no longer exists: work of a deleted user that was committing
 * while the user was deleted. Run after every deletion and by the upkeep sweep.
 */
export async function deleteOrphans(db: Kysely<Database>, sharedDir: string): Promise<{ files: number; pipelines: number }> {
  const live = db.selectFrom('users').select('id');
  const items = await db
    .selectFrom('library_items')
    .select(['id', 'owner_id'])
    .where('owner_id', 'not in', live)
    .where('owner_id', '!=', LOCAL_OWNER)
    .execute();
  if (items.length) {
    const { LibraryService } = await import('../library/service.js');
    const library = new LibraryService(db, sharedDir, 0);
    for (const it of items) await library.deleteItem({ id: it.owner_id, role: 'user' }, it.id).catch(() => {});
  }
  const r = await db.deleteFrom('pipelines').where('owner_id', 'not in', live).where('owner_id', '!=', LOCAL_OWNER).executeTakeFirst();
  return { files: items.length, pipelines: Number(r.numDeletedRows) };
}

export interface DeletedUser {
  user: UsersTable;
  jobsDeleted: number;
  filesDeleted: number;
  pipelinesDeleted: number;
  watchFoldersDeleted: number;
}

export async function deleteUser(
  db: Kysely<Database>,
  auth: Pick<Authenticator, 'forgetUser'> | undefined,
  jobs: JobStopper | undefined,
  actor: AuthUser,
  id: string,
  sharedDir: string,
): Promise<DeletedUser> {
  const target = await requireTarget(db, actor, id);
  await requireNotLastAdmin(db, target, 'deleted');
  const owned = await db.selectFrom('jobs').selectAll().where('owner_id', '=', id).execute();
  if (jobs) await cancelUnfinishedJobs(db, jobs, id);
  const watchFolders = await db.transaction().execute(async (tx) => {
    await requireNotLastAdmin(tx, target, 'deleted');
    await tx.deleteFrom('jobs').where('owner_id', '=', id).execute();
    // A watch folder runs every file as a job of its owner: without the owner each file would only fail.
    const folders = await tx.deleteFrom('watch_folders').where('owner_id', '=', id).executeTakeFirst();
    // Room held by uploads in flight (each is refused at commit, and its own release finds nothing).
    await tx.deleteFrom('quota_reservations').where('owner_id', '=', id).execute();
    // Sessions, keys, recovery codes and challenges go with the row (foreign keys cascade); deleted explicitly
    // too so a database without enforced foreign keys ends in the same state.
    await tx.deleteFrom('sessions').where('user_id', '=', id).execute();
    await tx.deleteFrom('api_keys').where('user_id', '=', id).execute();
    await tx.deleteFrom('mfa_recovery_codes').where('user_id', '=', id).execute();
    await tx.deleteFrom('mfa_challenges').where('user_id', '=', id).execute();
    await tx.deleteFrom('users').where('id', '=', id).execute();
    await bumpCredentials(tx);
    return Number(folders.numDeletedRows);
  });
  // The library goes only once the row is gone: the check above can still refuse inside the transaction
  // (two admins deleting each other at once), and the admin kept must keep its files. Then the work of
  // the user that was committing meanwhile (an upload in flight), left as orphans.
  const { files, pipelines } = await deleteOwnedLibrary(db, sharedDir, id);
  await deleteOrphans(db, sharedDir);
  for (const j of owned) {
    if (jobs) await jobs.removeFiles(j).catch(() => {});
    else if (j.work_dir) await rm(j.work_dir, { recursive: true, force: true }).catch(() => {});
  }
  auth?.forgetUser(id);
  return { user: target, jobsDeleted: owned.length, filesDeleted: files, pipelinesDeleted: pipelines, watchFoldersDeleted: watchFolders };
}
