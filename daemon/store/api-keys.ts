/**
 * API keys: stored as a scrypt hash plus a short non-secret prefix used to find the row.
 *
 * A key's row keeps its id for life; rotating it gives the row a new secret and keeps the old secret in
 * a row of its own (`replaced_by` = the key's id, `valid_until` = the end of the grace period). Revoked
 * keys keep their row with `revoked_at`, so a client presenting one learns why it stopped working.
 */
import type { Kysely } from 'kysely';
import { bumpCredentials } from '../auth/credentials-version.js';
import { API_KEY_PREFIX_LEN, hashSecret, newApiKey, newId } from '../auth/secrets.js';
import type { ApiKeysTable, Database, UsersTable } from './schema.js';

export interface ApiKeyInfo {
  id: string;
  name: string;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
}

export function keyPrefix(key: string): string {
  return key.slice(3, 3 + API_KEY_PREFIX_LEN);
}

export async function createApiKey(
  db: Kysely<Database>,
  userId: string,
  name: string,
  expiresAt: number | null = null,
): Promise<{ id: string; name: string; key: string }> {
  const key = newApiKey();
  const id = newId();
  await db
    .insertInto('api_keys')
    .values({
      id,
      user_id: userId,
      name,
      prefix: keyPrefix(key),
      key_hash: await hashSecret(key),
      created_at: Date.now(),
      last_used_at: null,
      expires_at: expiresAt,
    })
    .execute();
  return { id, name, key };
}

export function apiKeyInfo(r: ApiKeysTable): ApiKeyInfo {
  return {
    id: r.id,
    name: r.name,
    prefix: 'si_' + r.prefix,
    createdAt: new Date(Number(r.created_at)).toISOString(),
    lastUsedAt: r.last_used_at === null ? null : new Date(Number(r.last_used_at)).toISOString(),
  };
}

/** Live keys (not revoked, not a rotated-out secret), newest first. */
export async function listApiKeys(db: Kysely<Database>, userId?: string): Promise<ApiKeysTable[]> {
  let q = db
    .selectFrom('api_keys')
    .selectAll()
    .where('revoked_at', 'is', null)
    .where('replaced_by', 'is', null)
    .orderBy('created_at', 'desc');
  if (userId) q = q.where('user_id', '=', userId);
  return q.execute();
}

/** A live key by id (not revoked, not a rotated-out secret). */
export async function findLiveKey(db: Kysely<Database>, id: string): Promise<ApiKeysTable | undefined> {
  return db
    .selectFrom('api_keys')
    .selectAll()
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .where('replaced_by', 'is', null)
    .executeTakeFirst();
}

/** Candidates for a presented key, live or not: normally exactly one row. */
export async function findKeysByPrefix(db: Kysely<Database>, prefix: string): Promise<(ApiKeysTable & { user: UsersTable })[]> {
  const rows = await db
    .selectFrom('api_keys')
    .innerJoin('users', 'users.id', 'api_keys.user_id')
    .selectAll('users')
    .select([
      'api_keys.id as key_id',
      'api_keys.name as key_name',
      'api_keys.prefix',
      'api_keys.key_hash',
      'api_keys.created_at as key_created_at',
      'api_keys.last_used_at',
      'api_keys.expires_at as key_expires_at',
      'api_keys.revoked_at',
      'api_keys.replaced_by',
      'api_keys.valid_until',
    ])
    .where('api_keys.prefix', '=', prefix)
    .execute();
  return rows.map(
    ({
      key_id,
      key_name,
      prefix: p,
      key_hash,
      key_created_at,
      last_used_at,
      key_expires_at,
      revoked_at,
      replaced_by,
      valid_until,
      ...user
    }) => ({
      id: key_id,
      user_id: user.id,
      name: key_name,
      prefix: p,
      key_hash,
      created_at: key_created_at,
      last_used_at,
      expires_at: key_expires_at ?? null,
      revoked_at: revoked_at ?? null,
      replaced_by: replaced_by ?? null,
      valid_until: valid_until ?? null,
      user: user as UsersTable,
    }),
  );
}

/** Marks a live key revoked, with any of its rotated-out secrets still in their grace period. */
export async function revokeApiKey(db: Kysely<Database>, id: string, userId?: string): Promise<boolean> {
  const now = Date.now();
  return db.transaction().execute(async (tx) => {
    let q = tx
      .updateTable('api_keys')
      .set({ revoked_at: now })
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .where('replaced_by', 'is', null);
    if (userId) q = q.where('user_id', '=', userId);
    const r = await q.executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) return false;
    await tx.updateTable('api_keys').set({ revoked_at: now }).where('replaced_by', '=', id).where('revoked_at', 'is', null).execute();
    await bumpCredentials(tx);
    return true;
  });
}

/** Revokes every key of a user (a person's password was changed or reset). */
export async function revokeUserKeys(db: Kysely<Database>, userId: string): Promise<void> {
  await db.updateTable('api_keys').set({ revoked_at: Date.now() }).where('user_id', '=', userId).where('revoked_at', 'is', null).execute();
  await bumpCredentials(db);
}

/**
 * Gives a live key a new secret; the old one stays valid until `validUntil` in a row of its own.
 * `expiresAt` (when given) replaces the key's expiry. Returns undefined when the key is not live.
 */
export async function rotateApiKey(
  db: Kysely<Database>,
  id: string,
  validUntil: number,
  expiresAt?: number | null,
): Promise<{ id: string; name: string; key: string; expiresAt: number | null } | undefined> {
  const key = newApiKey();
  const hash = await hashSecret(key);
  return db.transaction().execute(async (tx) => {
    const row = await tx
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .where('replaced_by', 'is', null)
      .executeTakeFirst();
    if (!row) return undefined;
    const exp = expiresAt === undefined ? (row.expires_at ?? null) : expiresAt;
    // Only the row that still holds the old secret may change: two racing rotations cannot both win.
    const r = await tx
      .updateTable('api_keys')
      .set({ prefix: keyPrefix(key), key_hash: hash, expires_at: exp, last_used_at: null })
      .where('id', '=', id)
      .where('key_hash', '=', row.key_hash)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) return undefined;
    await tx
      .insertInto('api_keys')
      .values({ ...row, id: newId(), replaced_by: id, valid_until: Math.min(validUntil, row.expires_at ?? Infinity) })
      .execute();
    await bumpCredentials(tx);
    return { id, name: row.name, key, expiresAt: exp };
  });
}

export async function touchApiKey(db: Kysely<Database>, id: string): Promise<void> {
  await db.updateTable('api_keys').set({ last_used_at: Date.now() }).where('id', '=', id).execute();
}
