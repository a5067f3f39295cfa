/**
 * Who is calling: a Bearer session token or API key, checked on every non-public route.
 *
 * API keys are verified with one scrypt (their non-secret prefix finds the row). Successful
 * verifications are cached for KEY_CACHE_MS under the key's sha256, so a client hammering the API with
 * a key pays scrypt once a minute instead of on every request. The cache is only trusted while the
 * database's credentials version (daemon/auth/credentials-version.ts) is the one it was filled under:
 * every revocation, rotation, deletion or role change, by any instance or by `kiln admin` on the data
 * dir, bumps it, and the next request of every instance starts from an empty cache. Refusals are cached
 * the same way, so replaying a revoked or expired key does not cost a scrypt per request.
 *
 * A key that no longer works says why (error.details.reason): revoked, expired, rotated (its grace period
 * after a rotation is over), owner-disabled, or unknown (never issued, or its owner was deleted).
 *
 * A wrong secret under a prefix that exists costs a scrypt, so those checks go through the login
 * throttle (daemon/accounts/throttle.ts, keyThrottleKeys), counted in the database like sign-ins so every
 * instance shares the counts: per (prefix, address) pair and per address, LOGIN_MAX_FAILURES and five
 * times as many, then 429 RATE_LIMITED with Retry-After, without a hash, until the lock ends. The prefix
 * over all addresses is never locked, only slowed down, as a username is: the prefix is not secret (key
 * lists, logs), and a prefix lock would let anyone who read it lock the key's holder out everywhere.
 * What a lock would buy is small anyway: 336 random bits of secret are not found by guessing, so the
 * throttle is about the CPU a guess costs: a guess already seen failing (its sha256, remembered per
 * instance for FAILED_SECRET_MS) or being checked for another request at that moment gets no scrypt of
 * its own, so many addresses replaying one guess cost one hash per instance. The price of the pair and
 * address locks is the login throttle's: a holder behind the same address as the guesser (no
 * TRUST_PROXY behind a proxy, one NAT) is locked out with it once its cached verification ends. A prefix
 * that matches no key costs a lookup, no hash, and is not counted (made-up prefixes would only fill the
 * throttle table).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { KilnError } from '../../src/core/errors.js';
import { attemptSucceeded, failedAttempt, keyThrottleKeys, reserveAttempt } from '../accounts/throttle.js';
import type { DaemonConfig } from '../config.js';
import { findKeysByPrefix, keyPrefix, touchApiKey } from '../store/api-keys.js';
import type { Store } from '../store/db.js';
import type { Role, UsersTable } from '../store/schema.js';
import { findSession } from '../store/sessions.js';
import { firstAdmin } from '../store/users.js';
import { credentialsVersion } from './credentials-version.js';
import { isApiKeyShape, sha256, verifySecret } from './secrets.js';

export interface AuthUser {
  id: string;
  username: string;
  role: Role;
  teamId: string | null;
  /** 'service': work the daemon does for the user on its own (watch folders). */
  via: 'session' | 'api-key' | 'open' | 'service';
  sessionId?: string;
  apiKeyId?: string;
  /** The calling API key's expiry (epoch ms; null: none): keys it makes may not outlive it. */
  keyExpiresAt?: number | null;
}

export type KeyRefusal = 'revoked' | 'expired' | 'rotated' | 'owner-disabled' | 'unknown';

const REFUSALS: Record<KeyRefusal, string> = {
  revoked: 'The API key was revoked.',
  expired: 'The API key has expired. Create a new one.',
  rotated: 'The API key was rotated and its grace period is over: use the new key.',
  'owner-disabled': 'The account that owns this API key is disabled.',
  unknown: 'The API key is not valid (never issued, or its owner was deleted).',
};

/** 401 for an API key, with the reason in error.details.reason (and error.reason as api-key-<reason>). */
export function keyRefused(reason: KeyRefusal, message = REFUSALS[reason]): KilnError {
  return new KilnError('UNAUTHORIZED', message, { reason: `api-key-${reason}`, details: { reason } });
}

declare module 'fastify' {
  interface FastifyRequest {
    user?: AuthUser;
  }
  interface FastifyContextConfig {
    /** Reachable without credentials. */
    public?: boolean;
  }
}

const KEY_CACHE_MS = 60_000;
const KEY_CACHE_MAX = 10_000;
/** How long a wrong secret is refused without a scrypt, and how many are remembered. */
const FAILED_SECRET_MS = 15 * 60_000;
const FAILED_SECRET_MAX = 10_000;
/** With auth off every request acts as the first admin; look it up at most this often. */
const OPEN_USER_CACHE_MS = 5_000;

function fromRow(u: UsersTable, via: AuthUser['via'], extra: Partial<AuthUser> = {}): AuthUser {
  return { id: u.id, username: u.username, role: u.role, teamId: u.team_id, via, ...extra };
}

export class Authenticator {
  /** Verifications by the key's sha256: its user, or why it is refused. */
  private keyCache = new Map<string, { user?: AuthUser; refused?: KeyRefusal; until: number }>();
  /** The credentials version the cache was filled under. */
  private cacheVersion = -1;
  /**
   * Wrong secrets of existing prefixes by sha256, until when they are refused unhashed. Not emptied by a
   * credentials change: keys are random, a secret that was wrong never becomes right.
   */
  private failedSecrets = new Map<string, number>();
  /**
   * Verifications in flight by address and key: a burst of requests with one key (a cold cache after a
   * credentials change) shares one scrypt and one throttle reservation, so a client sending more than the
   * limit at once is not refused for attempts that are all right.
   */
  private inFlight = new Map<string, Promise<AuthUser>>();
  /** Secret checks in flight by key, from any address: one guess sent from many at once costs one scrypt. */
  private hashing = new Map<string, Promise<KeyRow | undefined>>();
  private openUser?: { user: AuthUser; until: number };

  constructor(
    private readonly store: Store,
    private readonly config: DaemonConfig,
  ) {}

  /**
   * The user for a request, or undefined when it carries no credentials. Bad credentials throw 401; too
   * many wrong API-key secrets 429 (with Retry-After on `reply`).
   */
  async identify(request: FastifyRequest, reply?: FastifyReply): Promise<AuthUser | undefined> {
    if (!this.config.authEnabled) {
      if (this.openUser && this.openUser.until > Date.now()) return this.openUser.user;
      const admin = await firstAdmin(this.store.db);
      if (!admin) throw new KilnError('UNAVAILABLE', 'No admin user exists yet.');
      this.openUser = { user: fromRow(admin, 'open'), until: Date.now() + OPEN_USER_CACHE_MS };
      return this.openUser.user;
    }
    const header = request.headers.authorization;
    if (!header) return undefined;
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!m) throw new KilnError('UNAUTHORIZED', 'The Authorization header must be "Bearer <session token or API key>".');
    const token = m[1]!;
    if (isApiKeyShape(token)) {
      try {
        return await this.byApiKey(token, request.ip);
      } catch (e) {
        if (reply) retryAfter(e, reply);
        throw e;
      }
    }
    if (token.startsWith('si_'))
      throw keyRefused(
        'unknown',
        'This is not a valid API key: kiln keys are si_ followed by 96 hexadecimal characters (check for a cut-off copy).',
      );
    return this.bySession(token);
  }

  private async bySession(token: string): Promise<AuthUser> {
    const s = await findSession(this.store.db, token);
    if (!s) throw new KilnError('UNAUTHORIZED', 'The session token is not valid (signed out or never issued). Log in again.');
    if (s.expiresAt <= Date.now())
      throw new KilnError('UNAUTHORIZED', 'The session has expired. Log in again.', { reason: 'session-expired' });
    if (s.user.disabled_at != null) throw new KilnError('UNAUTHORIZED', 'This account is disabled.', { reason: 'account-disabled' });
    return fromRow(s.user, 'session', { sessionId: s.sessionId });
  }

  private async byApiKey(key: string, ip: string): Promise<AuthUser> {
    const version = await credentialsVersion(this.store.db);
    if (version !== this.cacheVersion) {
      this.keyCache.clear();
      this.cacheVersion = version;
    }
    const cacheKey = sha256(key);
    const hit = this.keyCache.get(cacheKey);
    const now = Date.now();
    if (hit && hit.until > now) {
      if (hit.refused) throw keyRefused(hit.refused);
      return hit.user!;
    }
    if (hit) this.keyCache.delete(cacheKey);
    const flightKey = `${ip} ${cacheKey}`;
    let flight = this.inFlight.get(flightKey);
    if (!flight) {
      flight = this.verify(key, cacheKey, ip, now).finally(() => this.inFlight.delete(flightKey));
      this.inFlight.set(flightKey, flight);
    }
    return flight;
  }

  /** Checks a key not in the cache and caches the answer. */
  private async verify(key: string, cacheKey: string, ip: string, now: number): Promise<AuthUser> {
    const checked = await this.checkKey(key, cacheKey, ip, now);
    if (checked !== 'unknown' && this.keyCache.size >= KEY_CACHE_MAX) this.keyCache.delete(this.keyCache.keys().next().value!);
    // A refusal of a key that was issued stands until the credentials change (a revoked key stays
    // revoked): replaying it costs one scrypt a minute, not one per request. Unknown keys are not cached:
    // made up by the thousand, they would push the keys in use out of the cache.
    if (typeof checked === 'string') {
      if (checked !== 'unknown') this.keyCache.set(cacheKey, { refused: checked, until: now + KEY_CACHE_MS });
      throw keyRefused(checked);
    }
    this.keyCache.set(cacheKey, { user: checked.user, until: checked.until });
    await touchApiKey(this.store.db, checked.rowId);
    return checked.user;
  }

  /**
   * The key's user and how long that may be cached, or why the key is refused: one scrypt per candidate
   * row, under the throttle (429 without a hash once the pair or the address is locked).
   */
  private async checkKey(
    key: string,
    digest: string,
    ip: string,
    now: number,
  ): Promise<{ user: AuthUser; until: number; rowId: string } | KeyRefusal> {
    const prefix = keyPrefix(key);
    const rows = await findKeysByPrefix(this.store.db, prefix);
    if (rows.length === 0) return 'unknown';
    const counters = keyThrottleKeys(prefix, ip);
    const c = this.config.accounts;
    await reserveAttempt(this.store, counters, c, undefined, now);
    const { row, hashed } = await this.secretCheck(key, digest, rows, now);
    if (row) {
      // The right secret, even of a revoked key: its holder, who gets the reservation back.
      await attemptSucceeded(this.store, counters, true);
      return verdict(row, now);
    }
    const keyId = rows[0]!.replaced_by ?? rows[0]!.id;
    await failedAttempt(this.store, counters, c, (locked) => ({
      event: locked ? 'key.auth-locked' : 'key.auth-failure',
      target: keyId,
      ip,
      details: { prefix: `si_${prefix}`, why: hashed ? 'wrong-secret' : 'replayed-secret' },
    }));
    return 'unknown';
  }

  /**
   * The row whose hash the key matches (one scrypt per candidate row), shared by every request with this
   * key meanwhile, from any address; none, unhashed, for a secret seen failing recently. `hashed`: this
   * request ran the scrypt.
   */
  private secretCheck(key: string, digest: string, rows: KeyRow[], now: number): Promise<{ row?: KeyRow; hashed: boolean }> {
    if ((this.failedSecrets.get(digest) ?? 0) > now) return Promise.resolve({ hashed: false });
    const running = this.hashing.get(digest);
    if (running) return running.then((row) => ({ row, hashed: false }));
    const check = (async () => {
      for (const row of rows) if (await verifySecret(key, row.key_hash)) return row;
      this.failedSecrets.delete(digest);
      if (this.failedSecrets.size >= FAILED_SECRET_MAX) this.failedSecrets.delete(this.failedSecrets.keys().next().value!);
      this.failedSecrets.set(digest, now + FAILED_SECRET_MS);
      return undefined;
    })().finally(() => this.hashing.delete(digest));
    this.hashing.set(digest, check);
    return check.then((row) => ({ row, hashed: true }));
  }

  /** Drops cached verifications of a key (after it is deleted). */
  forgetApiKey(keyId: string): void {
    for (const [k, v] of this.keyCache) if (v.user?.apiKeyId === keyId) this.keyCache.delete(k);
  }

  /** Drops every cached key of a user (password change, role change, deletion). */
  forgetUser(userId: string): void {
    for (const [k, v] of this.keyCache) if (v.user?.id === userId) this.keyCache.delete(k);
    if (this.openUser?.user.id === userId) this.openUser = undefined;
  }
}

type KeyRow = Awaited<ReturnType<typeof findKeysByPrefix>>[number];

/** Whether a row's (right) secret is let in now, as whom and for how long, or why not. */
function verdict(row: KeyRow, now: number): { user: AuthUser; until: number; rowId: string } | KeyRefusal {
  if (row.revoked_at != null) return 'revoked';
  const graceEnd = row.replaced_by ? Number(row.valid_until ?? 0) : Infinity;
  if (graceEnd <= now) return 'rotated';
  const expiresAt = row.expires_at == null ? Infinity : Number(row.expires_at);
  if (expiresAt <= now) return 'expired';
  if (row.user.disabled_at != null) return 'owner-disabled';
  // A rotated-out secret acts as the key it was replaced by.
  const keyId = row.replaced_by ?? row.id;
  // What the secret may still do ends at its expiry or, rotated out, at the end of its grace: keys it
  // makes or rotates are bounded by that (keys.ts), so a leaked old secret cannot outlive its rotation.
  const until = Math.min(expiresAt, graceEnd);
  const user = fromRow(row.user, 'api-key', { apiKeyId: keyId, keyExpiresAt: Number.isFinite(until) ? until : null });
  // Never cache past the key's expiry or the end of its grace period.
  return { user, until: Math.min(expiresAt, graceEnd, now + KEY_CACHE_MS), rowId: row.id };
}

/** Retry-After for a 429 of a verification: several requests may share one, each reply gets the header. */
function retryAfter(e: unknown, reply: FastifyReply): void {
  if (!(e instanceof KilnError) || e.code !== 'RATE_LIMITED') return;
  const seconds = (e.details as { retryAfterSeconds?: number } | undefined)?.retryAfterSeconds;
  if (seconds) void reply.header('retry-after', String(seconds));
}

export function requireUser(request: FastifyRequest): AuthUser {
  if (!request.user) throw new KilnError('UNAUTHORIZED', 'Sign in first: send Authorization: Bearer <session token or API key>.');
  return request.user;
}

/**
 * A person at a session: the routes that change credentials (password, second factor) refuse API keys,
 * so a leaked key cannot take over an account.
 */
export function requireInteractiveUser(request: FastifyRequest): AuthUser {
  const user = requireUser(request);
  if (user.via === 'api-key')
    throw new KilnError('FORBIDDEN', 'API keys cannot change a password or the second factor: sign in with your password.', {
      reason: 'api-key-not-allowed',
    });
  return user;
}
