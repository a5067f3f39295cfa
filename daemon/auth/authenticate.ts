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
 */
import type { FastifyRequest } from 'fastify';
import { KilnError } from '../../src/core/errors.js';
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
  private openUser?: { user: AuthUser; until: number };

  constructor(
    private readonly store: Store,
    private readonly config: DaemonConfig,
  ) {}

  /** The user for a request, or undefined when it carries no credentials. Bad credentials throw 401. */
  async identify(request: FastifyRequest): Promise<AuthUser | undefined> {
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
    if (isApiKeyShape(token)) return this.byApiKey(token);
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

  private async byApiKey(key: string): Promise<AuthUser> {
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
    const checked = await this.checkKey(key, now);
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

  /** The key's user and how long that may be cached, or why the key is refused: one scrypt per candidate row. */
  private async checkKey(key: string, now: number): Promise<{ user: AuthUser; until: number; rowId: string } | KeyRefusal> {
    for (const row of await findKeysByPrefix(this.store.db, keyPrefix(key))) {
      if (!(await verifySecret(key, row.key_hash))) continue;
      if (row.revoked_at != null) return 'revoked';
      const graceEnd = row.replaced_by ? Number(row.valid_until ?? 0) : Infinity;
      if (graceEnd <= now) return 'rotated';
      const expiresAt = row.expires_at == null ? Infinity : Number(row.expires_at);
      if (expiresAt <= now) return 'expired';
      if (row.user.disabled_at != null) return 'owner-disabled';
      // A rotated-out secret acts as the key it was replaced by.
      const keyId = row.replaced_by ?? row.id;
      const user = fromRow(row.user, 'api-key', { apiKeyId: keyId, keyExpiresAt: row.expires_at == null ? null : Number(row.expires_at) });
      // Never cache past the key's expiry or the end of its grace period.
      return { user, until: Math.min(expiresAt, graceEnd, now + KEY_CACHE_MS), rowId: row.id };
    }
    return 'unknown';
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
