/**
 * Password login with login protection and the MFA challenge, shared by POST /api/auth/login and the
 * MFA completion route. Every failure takes the same path (a scrypt verification, also for unknown
 * users, and the same message), so neither the answer nor its timing tells whether a username exists.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { KilnError } from '../../src/core/errors.js';
import { dummyHash, verifyPassword } from '../auth/secrets.js';
import type { DaemonContext } from '../context.js';
import type { UsersTable } from '../store/schema.js';
import { createSession } from '../store/sessions.js';
import { findUserByNameAnyCase } from '../store/users.js';
import { audit } from './audit.js';
import { createChallenge } from './mfa.js';
import { attemptSucceeded, failedAttempt, reserveAttempt, type ThrottleKeys, throttleKeys } from './throttle.js';

export async function issueSession(
  ctx: DaemonContext,
  user: UsersTable,
): Promise<{ token: string; expiresAt: string; user: { id: string; username: string; role: string } }> {
  const { token, expiresAt } = await createSession(ctx.store.db, user.id, ctx.config.sessionDurationHours);
  return { token, expiresAt: new Date(expiresAt).toISOString(), user: { id: user.id, username: user.username, role: user.role } };
}

/** Counts a failed (reserved) attempt, waits out the slow-down, and throws the one generic answer (or 429 once locked). */
export async function failLogin(
  ctx: DaemonContext,
  request: FastifyRequest,
  reply: FastifyReply,
  username: string,
  why: string,
  message = 'Wrong username or password.',
  keys: ThrottleKeys = throttleKeys(username, request.ip),
): Promise<never> {
  await failedAttempt(
    ctx.store,
    keys,
    ctx.config.accounts,
    (locked) => ({ event: locked ? 'login.locked' : 'login.failure', target: username, ip: request.ip, details: { why } }),
    reply,
  );
  throw new KilnError('UNAUTHORIZED', message);
}

/**
 * A secret asked of a signed-in person (the current password of change-password and the MFA routes, the
 * code of mfa/disable) was wrong: counted like a failed login, answered 403 (or 429 once locked).
 */
export async function wrongCurrentPassword(
  ctx: DaemonContext,
  request: FastifyRequest,
  reply: FastifyReply,
  username: string,
  why: string,
  message = 'The current password is wrong.',
  reason = 'wrong-password',
  keys?: ThrottleKeys,
): Promise<never> {
  try {
    return await failLogin(ctx, request, reply, username, why, message, keys);
  } catch (e) {
    if (e instanceof KilnError && e.code === 'UNAUTHORIZED') throw new KilnError('FORBIDDEN', message, { reason });
    throw e;
  }
}

/**
 * Checks a secret of the account under the login throttle: the attempt is reserved first (429 without
 * checking when the limit is reached), a wrong answer is counted, a right one gives the reservation back.
 * `final` false: a second factor is still to come, so the pair's earlier failures are not forgiven yet.
 */
export async function guardedCheck(
  ctx: DaemonContext,
  request: FastifyRequest,
  reply: FastifyReply,
  username: string,
  check: () => Promise<boolean>,
  onWrong: () => Promise<never>,
  final = true,
  /** A second-factor code: mfaThrottleKeys (its own per-account lock). */
  keys: ThrottleKeys = throttleKeys(username, request.ip),
): Promise<void> {
  await reserveAttempt(ctx.store, keys, ctx.config.accounts, reply);
  let ok = false;
  try {
    ok = await check();
  } finally {
    if (ok) await attemptSucceeded(ctx.store, keys, final);
  }
  if (!ok) await onWrong();
}

export async function passwordLogin(
  ctx: DaemonContext,
  request: FastifyRequest,
  reply: FastifyReply,
  username: string,
  password: string,
): Promise<Record<string, unknown>> {
  const db = ctx.store.db;
  // Names are unique regardless of case (registration refuses a case variant), so "Ann" signs in as
  // ann, as people expect; an exact match wins for databases that hold variants made before that rule.
  const user = await findUserByNameAnyCase(db, username);
  const mfa = Number(user?.mfa_enabled ?? 0) === 1;
  // Verify against a dummy hash for unknown (or SSO-only, or service) users so the answer time does not reveal who exists.
  await guardedCheck(
    ctx,
    request,
    reply,
    username,
    async () =>
      (await verifyPassword(password, user?.password_hash ?? (await dummyHash()), (hash) =>
        // The same password in its normalised form: not a change (no credentials bump, sessions kept).
        db
          .updateTable('users')
          .set({ password_hash: hash })
          .where('id', '=', user!.id)
          .where('password_hash', '=', user!.password_hash)
          .execute(),
      )) &&
      !!user?.password_hash &&
      user.disabled_at == null,
    () => failLogin(ctx, request, reply, username, user ? 'password' : 'unknown-user'),
    !mfa,
  );
  if (mfa) {
    await audit(db, { event: 'login.mfa-challenge', actor: user!, target: user!.username, ip: request.ip });
    return { requiresMfa: true, mfaToken: await createChallenge(db, user!.id) };
  }
  await audit(db, { event: 'login.success', actor: user!, target: user!.username, ip: request.ip, details: { method: 'password' } });
  return issueSession(ctx, user!);
}
