/** User records. The accounts features (teams, MFA, SSO) build on these functions. */
import type { Kysely } from 'kysely';
import { KilnError } from '../../src/core/errors.js';
import { hashPassword, newId } from '../auth/secrets.js';
import type { Database, Role, UsersTable } from './schema.js';

export type UserRow = UsersTable;

export async function countUsers(db: Kysely<Database>): Promise<number> {
  const r = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function findUserByName(db: Kysely<Database>, username: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('username', '=', username).executeTakeFirst();
}

/**
 * The user whose name is `username`, else one whose name differs from it only in letter case: to people
 * "Ann" and "ann" are one name (the login throttle counts them as one too), so a new account must not
 * take a case variant of an existing one. Usernames are ASCII (checkUsername), which lower() folds alike
 * on SQLite and PostgreSQL.
 */
export async function findUserByNameAnyCase(db: Kysely<Database>, username: string): Promise<UserRow | undefined> {
  return (
    (await findUserByName(db, username)) ??
    db
      .selectFrom('users')
      .selectAll()
      .where((eb) => eb(eb.fn('lower', ['username']), '=', username.toLowerCase()))
      .executeTakeFirst()
  );
}

export async function findUserById(db: Kysely<Database>, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function createUser(
  db: Kysely<Database>,
  u: { username: string; password: string | null; role: Role; teamId?: string | null; service?: boolean },
): Promise<UserRow> {
  const now = Date.now();
  const row: UserRow = {
    id: newId(),
    username: u.username,
    // Unique (migration 0770): a case variant inserted at the same moment fails here, not later.
    username_key: u.username.toLowerCase(),
    password_hash: u.password === null ? null : await hashPassword(u.password),
    role: u.role,
    team_id: u.teamId ?? null,
    created_at: now,
    updated_at: now,
    ...(u.service ? { service: 1 } : {}),
  };
  await db.insertInto('users').values(row).execute();
  return row;
}

/** The first admin: the one AUTH_ENABLED=false acts as, and the fallback owner of open-mode jobs. */
export async function firstAdmin(db: Kysely<Database>): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('role', '=', 'admin').orderBy('created_at').limit(1).executeTakeFirst();
}

/**
 * Work that commits long after its request was authenticated (an upload streaming in) checks here that
 * its user still exists: what a user deleted meanwhile sends is refused, not left owned by nobody.
 */
/**
 * The owner of library items the local CLI stores in a data dir where no daemon has made an admin yet
 * (`kiln files upload` before the first `kiln serve`): no user row, yet alive.
 */
export const LOCAL_OWNER = 'local';

export async function requireLiveUser(db: Kysely<Database>, id: string): Promise<void> {
  if (id === LOCAL_OWNER) return;
  const u = await db.selectFrom('users').select(['id', 'disabled_at']).where('id', '=', id).executeTakeFirst();
  if (!u)
    throw new KilnError('UNAUTHORIZED', 'The account was deleted while this request ran; nothing was saved.', {
      reason: 'account-deleted',
    });
  if (u.disabled_at != null)
    throw new KilnError('UNAUTHORIZED', 'The account was disabled while this request ran; nothing was saved.', {
      reason: 'account-disabled',
    });
}
