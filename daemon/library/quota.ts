/**
 * The library quota: the distinct content held by an owner's items (a version that repeats content
 * the owner already holds costs nothing), against the owner's live libraryQuotaMb (settings, team,
 * LIBRARY_QUOTA_MB) or a fixed number of bytes.
 */
import type { Kysely } from 'kysely';
import { KilnError } from '../../src/core/errors.js';
import type { Database } from '../store/schema.js';

export const DEFAULT_QUOTA_MB = 1024;

/** LIBRARY_QUOTA_MB from the environment (0 = no quota). */
export function quotaBytesFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.LIBRARY_QUOTA_MB;
  if (raw === undefined || raw.trim() === '') return DEFAULT_QUOTA_MB * 1048576;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new KilnError('USAGE_ERROR', `LIBRARY_QUOTA_MB must be a number ≥ 0 (got "${raw}").`);
  return Math.round(n * 1048576);
}

function mb(bytes: number): string {
  return `${(bytes / 1048576).toFixed(bytes < 10 * 1048576 ? 2 : 0)} MB`;
}

export class LibraryQuota {
  private readonly limitOf: (ownerId: string) => Promise<number>;

  constructor(
    private readonly db: Kysely<Database>,
    /** Bytes an owner may hold (0: no quota), fixed or the owner's value now. */
    bytes: number | ((ownerId: string) => Promise<number>),
  ) {
    this.limitOf = typeof bytes === 'number' ? async () => bytes : bytes;
  }

  /** The owner's quota in bytes now (0: none). */
  limit(ownerId: string): Promise<number> {
    return this.limitOf(ownerId);
  }

  /** Bytes of distinct content held by the owner's items. */
  async usage(ownerId: string): Promise<number> {
    const r = await this.db
      .selectFrom((eb) =>
        eb
          .selectFrom('library_versions as v')
          .innerJoin('library_items as i', 'i.id', 'v.item_id')
          .innerJoin('library_blobs as b', 'b.hash', 'v.blob_hash')
          .where('i.owner_id', '=', ownerId)
          .select(['b.hash', 'b.size'])
          .distinct()
          .as('d'),
      )
      .select((eb) => eb.fn.sum<number | string | null>('d.size').as('total'))
      .executeTakeFirst();
    return Number(r?.total ?? 0);
  }

  private async holds(ownerId: string, hash: string): Promise<boolean> {
    const r = await this.db
      .selectFrom('library_versions as v')
      .innerJoin('library_items as i', 'i.id', 'v.item_id')
      .where('i.owner_id', '=', ownerId)
      .where('v.blob_hash', '=', hash)
      .select('v.id')
      .limit(1)
      .executeTakeFirst();
    return !!r;
  }

  error(used: number, adding: number, limit: number): KilnError {
    return new KilnError(
      'LIMIT_EXCEEDED',
      `Storage quota exceeded: this file needs ${mb(adding)} but ${mb(Math.max(0, limit - used))} of your ${mb(limit)} library quota is left (the libraryQuotaMb setting; LIBRARY_QUOTA_MB by default). Delete items or old versions to make room.`,
      { reason: 'quota', details: { quotaBytes: limit, usedBytes: used, neededBytes: adding } },
    );
  }

  /** Refuses `size` more bytes of content `hash` for the owner, unless the owner holds that content already. */
  async check(ownerId: string, hash: string, size: number): Promise<void> {
    const limit = await this.limit(ownerId);
    if (limit === 0 || (await this.holds(ownerId, hash))) return;
    const used = await this.usage(ownerId);
    if (used + size > limit) throw this.error(used, size, limit);
  }
}
