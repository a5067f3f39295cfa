/**
 * Login protection, counted in the database so every instance shares it. Three counters per failure:
 *
 * - the (username, address) pair: at LOGIN_MAX_FAILURES failures (counted over at least 15 minutes) the
 *   pair is locked for LOGIN_LOCK_MINUTES; after that lock one more failure locks it again for twice as
 *   long, and so on (up to a day), until a successful sign-in or a quiet day clears it. Every attempt of
 *   a locked pair, right or wrong, gets 429 with Retry-After.
 * - the address: five times the limit over all usernames (offices behind one NAT), then locked likewise.
 * - the username over all addresses: never locks (anyone could lock anyone out, the admin included),
 *   but from half the limit on each failure is answered more slowly (250 ms steps, up to 3 s).
 *
 * So someone guessing the admin's password locks only their own address out; the admin, from another
 * address, still signs in. Unknown usernames are counted like real ones, so a lock reveals nothing about
 * who exists. The address is the client's as fastify sees it: behind a reverse proxy set TRUST_PROXY.
 */
import type { FastifyReply } from 'fastify';
import type { Kysely } from 'kysely';
import { KilnError } from '../../src/core/errors.js';
import type { Database } from '../store/schema.js';
import type { AccountsConfig } from './config.js';

const STEP_DELAY_MS = 250;
const MAX_DELAY_MS = 3_000;
const COUNT_WINDOW_MS = 15 * 60_000;
const MAX_LOCK_MS = 24 * 3_600_000;
/** A pair's history of locks is forgotten after this long without a failure past its last lock. */
const LOCK_MEMORY_MS = 24 * 3_600_000;

export interface ThrottleKeys {
  user: string;
  ip: string;
  pair: string;
}

export function throttleKeys(username: string, ip: string): ThrottleKeys {
  const name = username.toLowerCase();
  return { user: `user:${name}`, ip: `ip:${ip}`, pair: `pair:${ip} ${name}` };
}

/** Throws RATE_LIMITED (with Retry-After on the reply) when the pair or the address is locked. */
export async function checkLocked(db: Kysely<Database>, keys: ThrottleKeys, reply: FastifyReply, now = Date.now()): Promise<void> {
  const rows = await db.selectFrom('login_throttle').selectAll().where('key', 'in', [keys.pair, keys.ip]).execute();
  const until = Math.max(0, ...rows.map((r) => Number(r.locked_until ?? 0)));
  if (until > now) {
    const seconds = Math.ceil((until - now) / 1000);
    void reply.header('retry-after', String(seconds));
    throw new KilnError('RATE_LIMITED', `Too many failed sign-in attempts. Try again in ${seconds} s.`, {
      details: { retryAfterSeconds: seconds },
    });
  }
}

interface Count {
  failures: number;
  first_at: number;
  locked_until: number | null;
  locks: number;
}

/** The next state of one counter after a failure. */
function next(key: string, row: Count | undefined, c: AccountsConfig, now: number): Count {
  const lockMs = c.loginLockMinutes * 60_000;
  // Failures are counted over at least 15 minutes, however short the lock: slow guessing still adds up.
  const windowMs = Math.max(lockMs, COUNT_WINDOW_MS);
  const locks = row && row.locked_until !== null && Number(row.locked_until) + LOCK_MEMORY_MS > now ? Number(row.locks ?? 0) : 0;
  if (key.startsWith('user:')) {
    const fresh = !row || Number(row.first_at) + windowMs < now;
    return { failures: fresh ? 1 : row.failures + 1, first_at: fresh ? now : Number(row.first_at), locked_until: null, locks: 0 };
  }
  const limit = key.startsWith('ip:') ? c.loginMaxFailures * 5 : c.loginMaxFailures;
  if (key.startsWith('pair:') && locks > 0) {
    // A pair that has been locked before is locked again at its next failure, for twice as long.
    const ms = Math.min(MAX_LOCK_MS, lockMs * 2 ** locks);
    return { failures: limit, first_at: now, locked_until: now + ms, locks: locks + 1 };
  }
  const lockOver = row?.locked_until != null && Number(row.locked_until) <= now;
  const fresh = !row || Number(row.first_at) + windowMs < now || lockOver;
  const failures = fresh ? 1 : row.failures + 1;
  if (failures >= limit) return { failures, first_at: fresh ? now : Number(row!.first_at), locked_until: now + lockMs, locks: 1 };
  return { failures, first_at: fresh ? now : Number(row!.first_at), locked_until: null, locks: key.startsWith('pair:') ? locks : 0 };
}

/** Counts a failure; returns how long to hold the answer back and whether it locked the pair or address. */
export async function recordFailure(
  db: Kysely<Database>,
  keys: ThrottleKeys,
  c: AccountsConfig,
  now = Date.now(),
): Promise<{ delayMs: number; locked: boolean }> {
  let delayMs = 0;
  let locked = false;
  for (const key of [keys.pair, keys.ip, keys.user]) {
    const row = await db.selectFrom('login_throttle').selectAll().where('key', '=', key).executeTakeFirst();
    const n = next(key, row as Count | undefined, c, now);
    await db
      .insertInto('login_throttle')
      .values({ key, ...n })
      .onConflict((oc) => oc.column('key').doUpdateSet(n))
      .execute();
    if (n.locked_until) locked = true;
    const half = Math.ceil(c.loginMaxFailures / 2) * (key.startsWith('ip:') ? 5 : 1);
    if (n.failures > half) delayMs = Math.max(delayMs, Math.min(MAX_DELAY_MS, (n.failures - half) * STEP_DELAY_MS));
  }
  return { delayMs, locked };
}

/** A successful sign-in clears the pair's count (not the address's: one good account must not launder guesses). */
export async function recordSuccess(db: Kysely<Database>, keys: ThrottleKeys): Promise<void> {
  await db.deleteFrom('login_throttle').where('key', '=', keys.pair).execute();
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
