/**
 * Login protection. Failures are counted per username and per client address (in the database, so every
 * instance shares them). From half the limit on, each further failure is answered more slowly; at the
 * limit (counted over LOGIN_LOCK_MINUTES, at least 15 minutes) the key is locked for LOGIN_LOCK_MINUTES and every attempt, right or wrong, gets 429 with
 * Retry-After. Addresses may fail five times as often as one username (offices behind one NAT).
 * Unknown usernames are counted like real ones, so a lock reveals nothing about who exists.
 */
import type { FastifyReply } from 'fastify';
import type { Kysely } from 'kysely';
import { KilnError } from '../../src/core/errors.js';
import type { Database } from '../store/schema.js';
import type { AccountsConfig } from './config.js';

const STEP_DELAY_MS = 250;
const MAX_DELAY_MS = 3_000;
const COUNT_WINDOW_MS = 15 * 60_000;

export interface ThrottleKeys {
  user: string;
  ip: string;
}

export function throttleKeys(username: string, ip: string): ThrottleKeys {
  return { user: `user:${username.toLowerCase()}`, ip: `ip:${ip}` };
}

function limitFor(key: string, c: AccountsConfig): number {
  return key.startsWith('ip:') ? c.loginMaxFailures * 5 : c.loginMaxFailures;
}

/** Throws RATE_LIMITED (with Retry-After on the reply) when either key is locked. */
export async function checkLocked(db: Kysely<Database>, keys: ThrottleKeys, reply: FastifyReply, now = Date.now()): Promise<void> {
  const rows = await db.selectFrom('login_throttle').selectAll().where('key', 'in', [keys.user, keys.ip]).execute();
  const until = Math.max(0, ...rows.map((r) => Number(r.locked_until ?? 0)));
  if (until > now) {
    const seconds = Math.ceil((until - now) / 1000);
    void reply.header('retry-after', String(seconds));
    throw new KilnError('RATE_LIMITED', `Too many failed sign-in attempts. Try again in ${seconds} s.`, {
      details: { retryAfterSeconds: seconds },
    });
  }
}

/** Counts a failure; returns how long to hold the answer back. */
export async function recordFailure(
  db: Kysely<Database>,
  keys: ThrottleKeys,
  c: AccountsConfig,
  now = Date.now(),
): Promise<{ delayMs: number; locked: boolean }> {
  const lockMs = c.loginLockMinutes * 60_000;
  // Failures are counted over at least 15 minutes, however short the lock: slow guessing still adds up.
  const windowMs = Math.max(lockMs, COUNT_WINDOW_MS);
  let delayMs = 0;
  let locked = false;
  for (const key of [keys.user, keys.ip]) {
    const limit = limitFor(key, c);
    const row = await db.selectFrom('login_throttle').selectAll().where('key', '=', key).executeTakeFirst();
    // A window that has passed (or a lock that has run out) starts over.
    const fresh = !row || Number(row.first_at) + windowMs < now || (row.locked_until !== null && Number(row.locked_until) <= now);
    const failures = fresh ? 1 : row.failures + 1;
    const lockedUntil = failures >= limit ? now + lockMs : null;
    if (!row) {
      await db
        .insertInto('login_throttle')
        .values({ key, failures, first_at: now, locked_until: lockedUntil })
        .onConflict((oc) => oc.column('key').doUpdateSet({ failures, first_at: now, locked_until: lockedUntil }))
        .execute();
    } else {
      await db
        .updateTable('login_throttle')
        .set({ failures, first_at: fresh ? now : row.first_at, locked_until: lockedUntil })
        .where('key', '=', key)
        .execute();
    }
    if (lockedUntil) locked = true;
    const half = Math.ceil(limit / 2);
    if (failures > half) delayMs = Math.max(delayMs, Math.min(MAX_DELAY_MS, (failures - half) * STEP_DELAY_MS));
  }
  return { delayMs, locked };
}

/** A successful sign-in clears the username's count (not the address's: one good account must not launder guesses). */
export async function recordSuccess(db: Kysely<Database>, keys: ThrottleKeys): Promise<void> {
  await db.deleteFrom('login_throttle').where('key', '=', keys.user).execute();
}

export async function clearThrottle(db: Kysely<Database>, username: string): Promise<void> {
  await db.deleteFrom('login_throttle').where('key', '=', `user:${username.toLowerCase()}`).execute();
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
