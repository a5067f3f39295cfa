/** API keys with an optional expiry, listed with their owners for admins. */
import type { Kysely } from 'kysely';
import { KilnError } from '../../src/core/errors.js';
import { apiKeyInfo, createApiKey } from '../store/api-keys.js';
import type { ApiKeysTable, Database } from '../store/schema.js';

const MAX_DAYS = 3650;

/** `expiresInDays` (number) or `expiresAt` (ISO date in the future); neither → the key never expires. */
export function parseExpiry(body: Record<string, unknown>, now = Date.now()): number | null {
  const { expiresInDays, expiresAt } = body;
  if (expiresInDays !== undefined && expiresAt !== undefined)
    throw new KilnError('VALIDATION_ERROR', 'Send expiresInDays or expiresAt, not both.', {
      details: [{ path: 'expiresAt', message: 'conflicts with expiresInDays' }],
    });
  if (expiresInDays !== undefined && expiresInDays !== null) {
    if (typeof expiresInDays !== 'number' || !Number.isFinite(expiresInDays) || expiresInDays <= 0 || expiresInDays > MAX_DAYS) {
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
  return null;
}

export async function createKeyWithExpiry(db: Kysely<Database>, userId: string, name: string, expiresAt: number | null) {
  const k = await createApiKey(db, userId, name);
  if (expiresAt !== null) await db.updateTable('api_keys').set({ expires_at: expiresAt }).where('id', '=', k.id).execute();
  return { ...k, expiresAt: expiresAt === null ? null : new Date(expiresAt).toISOString() };
}

export async function keyViews(db: Kysely<Database>, rows: ApiKeysTable[], withOwner: boolean): Promise<Record<string, unknown>[]> {
  const owners = withOwner ? new Map((await db.selectFrom('users').select(['id', 'username']).execute()).map((u) => [u.id, u])) : undefined;
  const now = Date.now();
  return rows.map((r) => {
    const exp = r.expires_at == null ? null : Number(r.expires_at);
    return {
      ...apiKeyInfo(r),
      expiresAt: exp === null ? null : new Date(exp).toISOString(),
      expired: exp !== null && exp <= now,
      ...(owners ? { owner: owners.get(r.user_id) ?? { id: r.user_id, username: null } } : {}),
    };
  });
}

export async function findKey(db: Kysely<Database>, id: string): Promise<ApiKeysTable | undefined> {
  return db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
}
