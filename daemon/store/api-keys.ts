/** API keys: stored as a scrypt hash plus a short non-secret prefix used to find the row. */
import type { Kysely } from 'kysely';
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

export async function createApiKey(db: Kysely<Database>, userId: string, name: string): Promise<{ id: string; name: string; key: string }> {
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

export async function listApiKeys(db: Kysely<Database>, userId?: string): Promise<ApiKeysTable[]> {
  let q = db.selectFrom('api_keys').selectAll().orderBy('created_at', 'desc');
  if (userId) q = q.where('user_id', '=', userId);
  return q.execute();
}

/** Candidates for a presented key: normally exactly one row. */
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
    ])
    .where('api_keys.prefix', '=', prefix)
    .execute();
  return rows.map(({ key_id, key_name, prefix: p, key_hash, key_created_at, last_used_at, key_expires_at, ...user }) => ({
    id: key_id,
    user_id: user.id,
    name: key_name,
    prefix: p,
    key_hash,
    created_at: key_created_at,
    last_used_at,
    expires_at: key_expires_at ?? null,
    user: user as UsersTable,
  }));
}

export async function deleteApiKey(db: Kysely<Database>, id: string, userId?: string): Promise<boolean> {
  let q = db.deleteFrom('api_keys').where('id', '=', id);
  if (userId) q = q.where('user_id', '=', userId);
  const r = await q.executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

export async function touchApiKey(db: Kysely<Database>, id: string): Promise<void> {
  await db.updateTable('api_keys').set({ last_used_at: Date.now() }).where('id', '=', id).execute();
}
