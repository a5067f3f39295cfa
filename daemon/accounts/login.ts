/**
 * Password login with login protection and the MFA challenge, shared by POST /api/auth/login and the
 * MFA completion route. Every failure takes the same path (a scrypt verification, also for unknown
 * users, and the same message), so neither the answer nor its timing tells whether a username exists.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { KilnError } from '../../src/core/errors.js';
import { dummyHash, verifySecret } from '../auth/secrets.js';
import type { DaemonContext } from '../context.js';
import type { UsersTable } from '../store/schema.js';
import { createSession } from '../store/sessions.js';
import { findUserByName } from '../store/users.js';
import { audit } from './audit.js';
import { createChallenge } from './mfa.js';
import { checkLocked, recordFailure, recordSuccess, sleep, throttleKeys } from './throttle.js';

export async function issueSession(
  ctx: DaemonContext,
  user: UsersTable,
): Promise<{ token: string; expiresAt: string; user: { id: string; username: string; role: string } }> {
  const { token, expiresAt } = await createSession(ctx.store.db, user.id, ctx.config.sessionDurationHours);
  return { token, expiresAt: new Date(expiresAt).toISOString(), user: { id: user.id, username: user.username, role: user.role } };
}

/** Counts a failed attempt, waits out the slow-down, and throws the one generic answer (or 429 once locked). */
export async function failLogin(
  ctx: DaemonContext,
  request: FastifyRequest,
  reply: FastifyReply,
  username: string,
  why: string,
  message = 'Wrong username or password.',
): Promise<never> {
  const keys = throttleKeys(username, request.ip);
  const { delayMs, locked } = await recordFailure(ctx.store.db, keys, ctx.config.accounts);
  await audit(ctx.store.db, { event: locked ? 'login.locked' : 'login.failure', target: username, ip: request.ip, details: { why } });
  if (delayMs) await sleep(delayMs);
  if (locked) await checkLocked(ctx.store.db, keys, reply);
  throw new KilnError('UNAUTHORIZED', message);
}

export async function passwordLogin(
  ctx: DaemonContext,
  request: FastifyRequest,
  reply: FastifyReply,
  username: string,
  password: string,
): Promise<Record<string, unknown>> {
  const db = ctx.store.db;
  const keys = throttleKeys(username, request.ip);
  await checkLocked(db, keys, reply);
  const user = await findUserByName(db, username);
  // Verify against a dummy hash for unknown (or SSO-only) users so the answer time does not reveal who exists.
  const ok = await verifySecret(password, user?.password_hash ?? (await dummyHash()));
  if (!user || !ok || !user.password_hash) return failLogin(ctx, request, reply, username, user ? 'password' : 'unknown-user');
  await recordSuccess(db, keys);
  if (Number(user.mfa_enabled ?? 0) === 1) {
    await audit(db, { event: 'login.mfa-challenge', actor: user, target: user.username, ip: request.ip });
    return { requiresMfa: true, mfaToken: await createChallenge(db, user.id) };
  }
  await audit(db, { event: 'login.success', actor: user, target: user.username, ip: request.ip, details: { method: 'password' } });
  return issueSession(ctx, user);
}
