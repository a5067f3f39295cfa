/**
 * API keys: creation (for oneself, or by an admin for a service account), rotation with a grace period,
 * and the lifetime rule: a key never outlives the credential that made it. A person at a session (signed
 * in with a password, SSO or a second factor) may give a key any lifetime up to MAX_DAYS, or none; an API
 * key that expires can only make or rotate keys that expire no later than itself (asked for nothing, the
 * new key inherits its expiry; asked for more, 400). So a leaked short-lived key cannot mint a lasting one.
 */
import type { Kysely } from 'kysely';
import { KilnError } from '../../src/core/errors.js';
import type { AuthUser } from '../auth/authenticate.js';
import { roleHas } from '../auth/permissions.js';
import { apiKeyInfo, createApiKey, findLiveKey, rotateApiKey } from '../store/api-keys.js';
import type { ApiKeysTable, Database } from '../store/schema.js';
import { findUserById } from '../store/users.js';
import { onlyFields } from './body.js';

const MAX_DAYS = 3650;

/** `expiresInDays` (number) or `expiresAt` (ISO date in the future); neither → undefined (the caller decides). */
export function parseExpiry(body: Record<string, unknown>, now = Date.now()): number | null | undefined {
  const { expiresInDays, expiresAt } = body;
  if (expiresInDays !== undefined && expiresAt !== undefined)
    throw new KilnError('VALIDATION_ERROR', 'Send expiresInDays or expiresAt, not both.', {
      details: [{ path: 'expiresAt', message: 'conflicts with expiresInDays' }],
    });
  if (expiresInDays !== undefined && expiresInDays !== null) {
    // Below half a millisecond the expiry rounds to now: a key dead at its creation, answered 201.
    if (
      typeof expiresInDays !== 'number' ||
      !Number.isFinite(expiresInDays) ||
      Math.round(expiresInDays * 86_400_000) <= 0 ||
      expiresInDays > MAX_DAYS
    ) {
      throw new KilnError('VALIDATION_ERROR', `expiresInDays must be a number of days in (0, ${MAX_DAYS}].`, {
        details: [{ path: 'expiresInDays', message: 'out of range' }],
      });
    }
    return now + Math.round(expiresInDays * 86_400_000);
  }
  if (expiresAt !== undefined && expiresAt !== null) {
    const t = typeof expiresAt === 'string' ? Date.parse(expiresAt) : NaN;
    if (!Number.isFinite(t) || t <= now || t > now + MAX_DAYS * 86_400_000) {
      throw new KilnError('VALIDATION_ERROR', `expiresAt must be an ISO 8601 date in the future, at most ${MAX_DAYS} days ahead.`, {
        details: [{ path: 'expiresAt', message: 'invalid' }],
      });
    }
    return t;
  }
  return undefined;
}

/**
 * The expiry a key made by `caller` gets: the asked one (undefined: none), bounded by the caller's own
 * key when the caller is an expiring API key.
 */
export function boundedExpiry(caller: AuthUser, asked: number | null | undefined): number | null {
  const parent = caller.via === 'api-key' ? (caller.keyExpiresAt ?? null) : null;
  if (parent === null) return asked ?? null;
  if (asked === undefined) return parent;
  if (asked === null || asked > parent)
    throw new KilnError(
      'VALIDATION_ERROR',
      `This API key expires at ${new Date(parent).toISOString()}; a key it makes cannot live longer. Ask for an earlier expiry, or sign in with a password to make a longer-lived key.`,
      { details: [{ path: 'expiresAt', message: 'later than the creating key' }], reason: 'expiry-beyond-parent' },
    );
  return asked;
}

/** The owner of a new key: the caller, or (`userId`, needs users:manage) a service account. */
export async function keyOwner(db: Kysely<Database>, caller: AuthUser, userId: unknown): Promise<{ id: string; username: string }> {
  if (userId === undefined || userId === null || userId === caller.id) return caller;
  if (typeof userId !== 'string')
    throw new KilnError('VALIDATION_ERROR', 'userId must be a string.', { details: [{ path: 'userId', message: 'invalid' }] });
  if (!roleHas(caller.role, 'users:manage'))
    throw new KilnError('FORBIDDEN', 'Issuing a key for another account needs the permission users:manage.', {
      details: { permission: 'users:manage' },
    });
  const owner = await findUserById(db, userId);
  if (!owner) throw new KilnError('NOT_FOUND', `No user ${userId}.`);
  if (Number(owner.service ?? 0) !== 1)
    throw new KilnError(
      'FORBIDDEN',
      `${owner.username} is a person, not a service account: people make and rotate their own keys (an admin may revoke them). Create a service account (POST /api/auth/users with "service": true) for CI.`,
      { reason: 'not-a-service-account' },
    );
  if (owner.disabled_at != null) throw new KilnError('CONFLICT', `${owner.username} is disabled.`);
  return { id: owner.id, username: owner.username };
}

export async function issueKey(
  db: Kysely<Database>,
  caller: AuthUser,
  body: Record<string, unknown>,
  name: string,
): Promise<{ id: string; name: string; key: string; expiresAt: string | null; userId: string; owner: string }> {
  // A misspelt expiry ("expiresInDay") ignored would make a key that never expires.
  onlyFields(body, ['name', 'userId', 'expiresInDays', 'expiresAt'], 'a new API key');
  const owner = await keyOwner(db, caller, body.userId);
  const expiresAt = boundedExpiry(caller, parseExpiry(body));
  const k = await createApiKey(db, owner.id, name, expiresAt);
  return { ...k, expiresAt: iso(expiresAt), userId: owner.id, owner: owner.username };
}

/** Who may rotate or revoke a key: its owner, or an admin (keys:all; rotating needs a service account too, rotateKey). */
export async function keyInReach(db: Kysely<Database>, caller: AuthUser, id: string): Promise<ApiKeysTable> {
  const row = await findLiveKey(db, id);
  if (!row || (row.user_id !== caller.id && !roleHas(caller.role, 'keys:all'))) throw new KilnError('NOT_FOUND', `No API key ${id}.`);
  return row;
}

export async function rotateKey(
  db: Kysely<Database>,
  caller: AuthUser,
  id: string,
  graceMs: number,
): Promise<{ id: string; name: string; key: string; expiresAt: string | null; previousKeyValidUntil: string }> {
  const row = await keyInReach(db, caller, id);
  // Rotating hands the caller the new secret: on another account's key that is issuing a key for it, so
  // the issuing rule applies (service accounts only). An admin rotating a person's key would hold a
  // credential acting as that person, whose own key stops at the end of the grace period.
  await keyOwner(db, caller, row.user_id);
  const current = row.expires_at == null ? null : Number(row.expires_at);
  if (current !== null && current <= Date.now()) throw new KilnError('CONFLICT', `The API key ${id} has expired; create a new one.`);
  // Rotation keeps the key's expiry, but never past the credential doing it.
  const parent = caller.via === 'api-key' ? (caller.keyExpiresAt ?? null) : null;
  const expiresAt = parent === null ? current : current === null ? parent : Math.min(current, parent);
  const validUntil = Date.now() + graceMs;
  const r = await rotateApiKey(db, id, validUntil, expiresAt);
  if (!r) throw new KilnError('CONFLICT', `The API key ${id} changed meanwhile (rotated or revoked); list the keys and try again.`);
  return {
    id: r.id,
    name: r.name,
    key: r.key,
    expiresAt: iso(r.expiresAt),
    previousKeyValidUntil: new Date(Math.min(validUntil, current ?? Infinity)).toISOString(),
  };
}

function iso(t: number | null): string | null {
  return t === null ? null : new Date(t).toISOString();
}

export async function keyViews(db: Kysely<Database>, rows: ApiKeysTable[], withOwner: boolean): Promise<Record<string, unknown>[]> {
  const owners = withOwner
    ? new Map((await db.selectFrom('users').select(['id', 'username', 'service']).execute()).map((u) => [u.id, u]))
    : undefined;
  const now = Date.now();
  return rows.map((r) => {
    const exp = r.expires_at == null ? null : Number(r.expires_at);
    const o = owners?.get(r.user_id);
    return {
      ...apiKeyInfo(r),
      expiresAt: exp === null ? null : new Date(exp).toISOString(),
      expired: exp !== null && exp <= now,
      ...(owners
        ? { owner: o ? { id: o.id, username: o.username, service: Number(o.service ?? 0) === 1 } : { id: r.user_id, username: null } }
        : {}),
    };
  });
}
