/**
 * Who is calling: a Bearer session token or API key, checked on every non-public route.
 *
 * API keys are verified with one scrypt (their non-secret prefix finds the row). Successful
 * verifications are cached for KEY_CACHE_MS under the key's sha256, so a client hammering the API with
 * a key pays scrypt once a minute instead of on every request; deleting a key through this instance
 * drops it from the cache at once (other instances notice within KEY_CACHE_MS).
 */
import type { FastifyRequest } from 'fastify';
import { KilnError } from '../../src/core/errors.js';
import type { DaemonConfig } from '../config.js';
import { findKeysByPrefix, keyPrefix, touchApiKey } from '../store/api-keys.js';
import type { Store } from '../store/db.js';
import type { Role, UsersTable } from '../store/schema.js';
import { findSession } from '../store/sessions.js';
import { firstAdmin } from '../store/users.js';
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
  private keyCache = new Map<string, { user: AuthUser; until: number }>();
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
    return isApiKeyShape(token) ? this.byApiKey(token) : this.bySession(token);
  }

  private async bySession(token: string): Promise<AuthUser> {
    const s = await findSession(this.store.db, token);
    if (!s) throw new KilnError('UNAUTHORIZED', 'The session token is not valid (signed out or never issued). Log in again.');
    if (s.expiresAt <= Date.now())
      throw new KilnError('UNAUTHORIZED', 'The session has expired. Log in again.', { reason: 'session-expired' });
    return fromRow(s.user, 'session', { sessionId: s.sessionId });
  }

  private async byApiKey(key: string): Promise<AuthUser> {
    const cacheKey = sha256(key);
    const hit = this.keyCache.get(cacheKey);
    if (hit && hit.until > Date.now()) return hit.user;
    if (hit) this.keyCache.delete(cacheKey);
    for (const row of await findKeysByPrefix(this.store.db, keyPrefix(key))) {
      if (await verifySecret(key, row.key_hash)) {
        const expiresAt = row.expires_at == null ? Infinity : Number(row.expires_at);
        if (expiresAt <= Date.now())
          throw new KilnError('UNAUTHORIZED', 'The API key has expired. Create a new one.', { reason: 'api-key-expired' });
        const user = fromRow(row.user, 'api-key', { apiKeyId: row.id });
        if (this.keyCache.size >= KEY_CACHE_MAX) this.keyCache.delete(this.keyCache.keys().next().value!);
        // Never cache past the key's expiry.
        this.keyCache.set(cacheKey, { user, until: Math.min(expiresAt, Date.now() + KEY_CACHE_MS) });
        await touchApiKey(this.store.db, row.id);
        return user;
      }
    }
    throw new KilnError('UNAUTHORIZED', 'The API key is not valid (revoked or never issued).');
  }

  /** Drops cached verifications of a key (after it is deleted). */
  forgetApiKey(keyId: string): void {
    for (const [k, v] of this.keyCache) if (v.user.apiKeyId === keyId) this.keyCache.delete(k);
  }

  /** Drops every cached key of a user (password change, role change, deletion). */
  forgetUser(userId: string): void {
    for (const [k, v] of this.keyCache) if (v.user.id === userId) this.keyCache.delete(k);
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
