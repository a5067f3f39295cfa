/**
 * Login protection, counted in the database so every instance shares it. Three counters per attempt:
 *
 * - the (username, address) pair: at LOGIN_MAX_FAILURES failures (counted over at least 15 minutes) the
 *   pair is locked for LOGIN_LOCK_MINUTES; after that lock one more failure locks it again for twice as
 *   long, and so on (up to a day), until a successful sign-in or a quiet day clears it. Every attempt of
 *   a locked pair, right or wrong, gets 429 with Retry-After.
 * - the address: five times the limit over all usernames (offices behind one NAT), then locked likewise.
 * - the username over all addresses: never locks (anyone could lock anyone out, the admin included),
 *   but from half the limit on each failure is answered more slowly (250 ms steps, up to 3 s).
 *
 * An attempt is *reserved* before the slow secret check: one transaction (rows locked FOR UPDATE on
 * PostgreSQL; SQLite runs kysely transactions one at a time on its single connection) counts it as a
 * failure and refuses it when the pair or address already holds its limit of attempts. So a burst of
 * parallel guesses gets at most the limit checked, whatever their timing; the rest get 429 without a
 * hash. A right answer gives its reservation back (attemptSucceeded).
 *
 * The same counters guard every place a secret of the account is checked: password login, the TOTP or
 * recovery code of the second step, and the current password asked by change-password and the MFA routes.
 *
 * So someone guessing the admin's password locks only their own address out; the admin, from another
 * address, still signs in. Unknown usernames are counted like real ones, so a lock reveals nothing about
 * who exists. The address is the client's as fastify sees it (behind a reverse proxy set TRUST_PROXY),
 * an IPv6 one counted by its /64 (http/client-net.ts).
 *
 * API-key secrets are counted by the same functions under counters of their own (keyThrottleKeys): the
 * key's public prefix takes the username's place (never locked), and only the pair is reserved up front
 * (daemon/auth/authenticate.ts says why).
 */
import type { FastifyReply } from 'fastify';
import type { Kysely, Transaction } from 'kysely';
import { KilnError } from '../../src/core/errors.js';
import type { Store } from '../store/db.js';
import type { Database } from '../store/schema.js';
import { clientNet } from '../http/client-net.js';
import { type AuditInput, audit } from './audit.js';
import type { AccountsConfig } from './config.js';

const STEP_DELAY_MS = 250;
const MAX_DELAY_MS = 3_000;
const COUNT_WINDOW_MS = 15 * 60_000;
const MAX_LOCK_MS = 24 * 3_600_000;
/** A pair's history of locks is forgotten after this long without a failure past its last lock. */
const LOCK_MEMORY_MS = 24 * 3_600_000;

type Role = 'pair' | 'ip' | 'user';
const ROLES: Role[] = ['pair', 'ip', 'user'];

export interface ThrottleKeys {
  /** Over all addresses: never locked, only slowed down. */
  user: string;
  /** The client's network (clientNet: an IPv4 address, an IPv6 /64), and the pair of it and the name. */
  ip: string;
  pair: string;
  /** The counters an attempt reserves before its check; the others count only failures (and refuse while locked). */
  reserved: readonly Role[];
  /** What the 429 says there were too many of. */
  what: string;
  /**
   * The `user` counter locks too, like the pair (a second factor: only someone who knows the password
   * reaches it, so a lock of it is no way for strangers to lock the account out).
   */
  userLocks?: boolean;
}

export function throttleKeys(username: string, address: string): ThrottleKeys {
  const name = username.toLowerCase();
  const ip = clientNet(address);
  return { user: `user:${name}`, ip: `ip:${ip}`, pair: `pair:${ip} ${name}`, reserved: ROLES, what: 'failed sign-in attempts' };
}

/**
 * The counters of a second-factor code (TOTP or recovery code): the pair and the address of the
 * password's counters, so codes and passwords add up there as before, and the account's codes over all
 * addresses, which lock after LOGIN_MAX_FAILURES wrong ones (escalating like a pair): from many
 * addresses (an IPv6 /48 holds 65,536 /64s) the pair and address locks alone let a guesser try the
 * million codes of a TOTP step at leisure.
 */
export function mfaThrottleKeys(username: string, address: string): ThrottleKeys {
  const keys = throttleKeys(username, address);
  return { ...keys, user: `mfa:${username.toLowerCase()}`, userLocks: true, what: 'failed second-factor attempts' };
}

/**
 * The counters of an API key's secret: its public prefix, the address, the pair. The address is not
 * reserved: a client sending many different (right) keys at once through one address, as after every
 * credentials change empties the verification caches, would otherwise fill the address's limit with
 * attempts in flight and lock it.
 */
export function keyThrottleKeys(prefix: string, address: string): ThrottleKeys {
  const ip = clientNet(address);
  return {
    user: `apikey:${prefix}`,
    ip: `apikey-ip:${ip}`,
    pair: `apikey-pair:${ip} ${prefix}`,
    reserved: ['pair', 'user'],
    what: 'failed API-key attempts',
  };
}

/**
 * The counters of SSO callbacks (a state, code or signed response that does not check out), per
 * provider and client network like password logins: the pair and the address are reserved and lock;
 * the provider over all addresses is only slowed.
 */
export function ssoThrottleKeys(provider: string, address: string): ThrottleKeys {
  const ip = clientNet(address);
  return {
    user: `sso:${provider}`,
    ip: `sso-ip:${ip}`,
    pair: `sso-pair:${ip} ${provider}`,
    reserved: ['pair', 'ip'],
    what: 'failed single sign-on attempts',
  };
}

interface Row {
  key: string;
  failures: number;
  first_at: number;
  locked_until: number | null;
  locks: number;
}

function limitOf(role: Role, c: AccountsConfig, keys: ThrottleKeys): number {
  if (role === 'user') return keys.userLocks ? c.loginMaxFailures : Infinity;
  return role === 'ip' ? c.loginMaxFailures * 5 : c.loginMaxFailures;
}

function lockMs(c: AccountsConfig): number {
  return c.loginLockMinutes * 60_000;
}

/** RATE_LIMITED until `until`, with Retry-After on the reply when there is one (and retryAfterSeconds in the details). */
function rateLimited(until: number, now: number, reply: FastifyReply | undefined, what: string): KilnError {
  const seconds = Math.max(1, Math.ceil((until - now) / 1000));
  if (reply) void reply.header('retry-after', String(seconds));
  return new KilnError('RATE_LIMITED', `Too many ${what}. Try again in ${seconds} s.`, { details: { retryAfterSeconds: seconds } });
}

/**
 * Runs `f` on the counters of `keys` inside one transaction, rows created when missing and locked
 * against concurrent attempts; `f` returns the rows to write back.
 */
async function withCounters<T>(
  store: Store,
  keys: string[],
  now: number,
  f: (rows: Map<string, Row>) => { write: Row[]; result: T },
): Promise<T> {
  const sorted = [...new Set(keys)].sort(); // one lock order for every transaction: no deadlocks
  return store.db.transaction().execute(async (tx: Transaction<Database>) => {
    await tx
      .insertInto('login_throttle')
      .values(sorted.map((key) => ({ key, failures: 0, first_at: now, locked_until: null, locks: 0 })))
      .onConflict((oc) => oc.column('key').doNothing())
      .execute();
    let q = tx.selectFrom('login_throttle').selectAll().where('key', 'in', sorted).orderBy('key');
    if (store.kind === 'postgres') q = q.forUpdate();
    const rows = new Map<string, Row>();
    for (const r of await q.execute())
      rows.set(r.key, {
        key: r.key,
        failures: Number(r.failures),
        first_at: Number(r.first_at),
        locked_until: r.locked_until == null ? null : Number(r.locked_until),
        locks: Number(r.locks ?? 0),
      });
    const { write, result } = f(rows);
    for (const { key, ...v } of write) await tx.updateTable('login_throttle').set(v).where('key', '=', key).execute();
    return result;
  });
}

/** A counter as it stands at `now`: an over window or an ended lock starts counting afresh. */
function current(row: Row, c: AccountsConfig, now: number): Row {
  const windowMs = Math.max(lockMs(c), COUNT_WINDOW_MS);
  // A lock that has ended starts a fresh count once (first_at moves past it); the lock itself stays
  // recorded for LOCK_MEMORY_MS so the pair's next failure locks it again, for longer.
  const lockOver = row.locked_until !== null && row.locked_until <= now && row.first_at < row.locked_until;
  const remembered = row.locked_until !== null && row.locked_until + LOCK_MEMORY_MS > now;
  const locks = remembered ? row.locks : 0;
  if (row.first_at + windowMs < now || lockOver) return { ...row, failures: 0, first_at: now, locks };
  return { ...row, locks };
}

/**
 * Reserves one attempt for the pair, the address and the username before a secret is checked. Throws
 * RATE_LIMITED (Retry-After on the reply) when the pair or address is locked or already holds its limit
 * of attempts; nothing is checked then.
 */
export async function reserveAttempt(
  store: Store,
  keys: ThrottleKeys,
  c: AccountsConfig,
  reply?: FastifyReply,
  now = Date.now(),
): Promise<void> {
  const refused = await withCounters(store, [keys.pair, keys.ip, keys.user], now, (rows) => {
    const locked = lockable(keys)
      .map((k) => rows.get(k)!)
      .find((r) => r.locked_until !== null && r.locked_until > now);
    if (locked) return { write: [], result: locked.locked_until! };
    const next = keys.reserved.map((role) => ({ role, row: current(rows.get(keys[role])!, c, now) }));
    const full = next.find(({ role, row }) => row.failures >= limitOf(role, c, keys));
    if (full) {
      // The limit is already in flight or spent: lock now, so the answer can say how long to wait.
      const until = now + lockMs(c);
      return { write: [{ ...full.row, locked_until: until }], result: until };
    }
    return { write: next.map(({ row }) => ({ ...row, failures: row.failures + 1 })), result: 0 };
  });
  if (refused) throw rateLimited(refused, now, reply, keys.what);
}

/**
 * The reserved attempt failed: locks a pair or address that has reached its limit (a pair locked before
 * is locked again at once, for twice as long). Returns how long to hold the answer back and whether it locked.
 */
export async function attemptFailed(
  store: Store,
  keys: ThrottleKeys,
  c: AccountsConfig,
  now = Date.now(),
): Promise<{ delayMs: number; locked: boolean; lockedUntil: number }> {
  return withCounters(store, [keys.pair, keys.ip, keys.user], now, (rows) => {
    let delayMs = 0;
    let lockedUntil = 0;
    const write = new Map<string, Row>();
    for (const role of ROLES) {
      const stored = rows.get(keys[role])!;
      const lockedNow = stored.locked_until !== null && stored.locked_until > now;
      // A counter the attempt did not reserve counts its failure now.
      let r = stored;
      if (!keys.reserved.includes(role) && !lockedNow) {
        const cur = current(stored, c, now);
        r = { ...cur, failures: cur.failures + 1 };
        write.set(r.key, r);
      }
      const half = Math.ceil(c.loginMaxFailures / 2) * (role === 'ip' ? 5 : 1);
      if (r.failures > half) delayMs = Math.max(delayMs, Math.min(MAX_DELAY_MS, (r.failures - half) * STEP_DELAY_MS));
      if ((role === 'user' && !keys.userLocks) || lockedNow) {
        if (lockedNow) lockedUntil = Math.max(lockedUntil, stored.locked_until!);
        continue;
      }
      const cur = current(r, c, now);
      const escalate = role !== 'ip' && cur.locks > 0;
      if (escalate || cur.failures >= limitOf(role, c, keys)) {
        const ms = escalate ? Math.min(MAX_LOCK_MS, lockMs(c) * 2 ** cur.locks) : lockMs(c);
        const until = now + ms;
        lockedUntil = Math.max(lockedUntil, until);
        write.set(r.key, { ...cur, failures: Math.max(cur.failures, limitOf(role, c, keys)), locked_until: until, locks: cur.locks + 1 });
      }
    }
    return { write: [...write.values()], result: { delayMs, locked: lockedUntil > now, lockedUntil } };
  });
}

/**
 * Counts a failed (reserved) attempt, records it in the audit log, waits out the slow-down, and throws
 * RATE_LIMITED (Retry-After on the reply) when the pair or the address is now locked; returns otherwise,
 * for the caller to give its own answer to a wrong secret.
 */
export async function failedAttempt(
  store: Store,
  keys: ThrottleKeys,
  c: AccountsConfig,
  record: (locked: boolean) => AuditInput,
  reply?: FastifyReply,
): Promise<void> {
  const { delayMs, locked, lockedUntil } = await attemptFailed(store, keys, c);
  await audit(store.db, record(locked));
  if (delayMs) await sleep(delayMs);
  if (locked) throw rateLimited(lockedUntil, Date.now(), reply, keys.what);
}

/**
 * The reserved attempt was right. `final`: the person is fully signed in (or proved the password), which
 * clears the pair; otherwise (a second factor is still to come) the pair keeps its count minus this one.
 * The address and the username only get their reservation back: one good account must not launder guesses.
 */
export async function attemptSucceeded(store: Store, keys: ThrottleKeys, final: boolean, now = Date.now()): Promise<void> {
  await withCounters(store, [keys.pair, keys.ip, keys.user], now, (rows) => ({
    write: keys.reserved.map((role) => {
      const r = rows.get(keys[role])!;
      if (final && role === 'pair') return { ...r, failures: 0, locked_until: null, locks: 0 };
      return { ...r, failures: Math.max(0, r.failures - 1) };
    }),
    result: undefined,
  }));
}

/** Throws RATE_LIMITED (with Retry-After) when the pair or the address is locked. */
export async function checkLocked(db: Kysely<Database>, keys: ThrottleKeys, reply: FastifyReply, now = Date.now()): Promise<void> {
  const rows = await db.selectFrom('login_throttle').selectAll().where('key', 'in', lockable(keys)).execute();
  const until = Math.max(0, ...rows.map((r) => Number(r.locked_until ?? 0)));
  if (until > now) throw rateLimited(until, now, reply, keys.what);
}

/**
 * A fixed-window rate limit on an action (`rate:<action>:<who>`), counted atomically in the same table:
 * at most `max` per `windowMs`, then RATE_LIMITED with Retry-After until the window ends.
 */
export async function rateLimit(
  store: Store,
  key: string,
  max: number,
  windowMs: number,
  what: string,
  reply?: FastifyReply,
  now = Date.now(),
): Promise<void> {
  const k = `rate:${key}`;
  const until = await withCounters(store, [k], now, (rows) => {
    const r = rows.get(k)!;
    const fresh = r.first_at + windowMs <= now ? { ...r, failures: 0, first_at: now } : r;
    if (fresh.failures >= max) return { write: [], result: fresh.first_at + windowMs };
    return { write: [{ ...fresh, failures: fresh.failures + 1 }], result: 0 };
  });
  if (until) throw rateLimited(until, now, reply, what);
}

/** The counters whose lock refuses an attempt. */
function lockable(keys: ThrottleKeys): string[] {
  return keys.userLocks ? [keys.pair, keys.ip, keys.user] : [keys.pair, keys.ip];
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
