/** Login sessions, stored by the sha256 of their token. */
import type { Kysely } from 'kysely';
import { newSessionToken, sha256 } from '../auth/secrets.js';
import type { Database, UsersTable } from './schema.js';

export async function createSession(db: Kysely<Database>, userId: string, hours: number): Promise<{ token: string; expiresAt: number }> {
  const token = newSessionToken();
  const now = Date.now();
  const expiresAt = now + hours * 3_600_000;
  await db
    .insertInto('sessions')
    .values({ id: sha256(token), user_id: userId, created_at: now, expires_at: expiresAt })
    .execute();
  return { token, expiresAt };
}

export async function findSession(
  db: Kysely<Database>,
  token: string,
): Promise<{ sessionId: string; expiresAt: number; user: UsersTable } | undefined> {
  const row = await db
    .selectFrom('sessions')
    .innerJoin('users', 'users.id', 'sessions.user_id')
    .selectAll('users')
    .select(['sessions.id as session_id', 'sessions.expires_at as session_expires_at'])
    .where('sessions.id', '=', sha256(token))
    .executeTakeFirst();
  if (!row) return undefined;
  const { session_id, session_expires_at, ...user } = row;
  return { sessionId: session_id, expiresAt: Number(session_expires_at), user: user as UsersTable };
}

export async function deleteSession(db: Kysely<Database>, sessionId: string): Promise<void> {
  await db.deleteFrom('sessions').where('id', '=', sessionId).execute();
}

/** Ends every session of a user, and its sign-ins waiting for a second factor; returns the sessions ended. */
export async function deleteUserSessions(db: Kysely<Database>, userId: string): Promise<number> {
  return db.transaction().execute(async (tx) => {
    const r = await tx.deleteFrom('sessions').where('user_id', '=', userId).executeTakeFirst();
    await tx.deleteFrom('mfa_challenges').where('user_id', '=', userId).execute();
    return Number(r.numDeletedRows);
  });
}

/**
 * More account upkeep to run with each sweep of expired sessions, per database: the accounts routes
 * register their retention here (daemon/accounts/retention.ts), so the job sweeper (daemon/jobs/upkeep.ts)
 * prunes account rows on its existing schedule without knowing about them.
 */
const accountSweeps = new WeakMap<Kysely<Database>, (now: number) => Promise<unknown>>();

export function alsoOnSessionSweep(db: Kysely<Database>, sweep: (now: number) => Promise<unknown>): void {
  accountSweeps.set(db, sweep);
}

export async function deleteExpiredSessions(db: Kysely<Database>, now = Date.now()): Promise<void> {
  await db.deleteFrom('sessions').where('expires_at', '<', now).execute();
  await accountSweeps.get(db)?.(now);
}
