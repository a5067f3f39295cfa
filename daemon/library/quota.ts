/**
 * The library quota: the distinct content held by an owner's items (a version that repeats content
 * the owner already holds costs nothing), against the owner's live libraryQuotaMb (settings, team,
 * LIBRARY_QUOTA_MB) or a fixed number of bytes.
 *
 * Parallel uploads must not each see the same free room (issue #21: 8 uploads of 600 kB all passed a
 * 1 MB quota). Before content is stored, its size is reserved in `quota_reservations` by one
 * conditional INSERT … SELECT that counts what is held plus what others have reserved: atomic on
 * SQLite (one statement, one writer) and, under a per-owner advisory lock, on PostgreSQL, across every
 * instance. The reservation is dropped once the version is recorded (it then counts as held) or the
 * upload failed; one left by a crashed process stops counting after RESERVATION_TTL_MS.
 */
import { PostgresAdapter, sql, type Kysely } from 'kysely';
import { KilnError } from '../../src/core/errors.js';
import { newId } from '../auth/secrets.js';
import type { Database } from '../store/schema.js';

const RESERVATION_TTL_MS = 3_600_000;

declare module '../store/schema.js' {
  interface Database {
    quota_reservations: { id: string; owner_id: string; kind: string; bytes: number; created_at: number };
  }
}

/** Ends a reservation; safe to call more than once. */
export type Release = () => Promise<void>;

export const DEFAULT_QUOTA_MB = 1024;

/** LIBRARY_QUOTA_MB from the environment (0 = no quota). */
export function quotaBytesFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.LIBRARY_QUOTA_MB;
  if (raw === undefined || raw.trim() === '') return DEFAULT_QUOTA_MB * 1048576;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new KilnError('USAGE_ERROR', `LIBRARY_QUOTA_MB must be a number ≥ 0 (got "${raw}").`);
  return Math.round(n * 1048576);
}

/** Megabytes, as the setting is given; under 0.01 MB in bytes or KB ("needs 0.00 MB but 0.00 MB is left" said nothing). */
function mb(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 10486) return `${(bytes / 1024).toFixed(1)} KB`;
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

  /** Bytes reserved by uploads of the owner still being stored. */
  async reserved(ownerId: string): Promise<number> {
    const r = await this.db
      .selectFrom('quota_reservations')
      .select((eb) => eb.fn.sum<number | string | null>('bytes').as('total'))
      .where('owner_id', '=', ownerId)
      .where('kind', '=', 'library')
      .where('created_at', '>', Date.now() - RESERVATION_TTL_MS)
      .executeTakeFirst();
    return Number(r?.total ?? 0);
  }

  /**
   * Reserves `size` more bytes of content `hash` for the owner (nothing when the owner holds that
   * content already); LIMIT_EXCEEDED when held + reserved + size passes the quota. Call the returned
   * function once the content is recorded or has failed.
   */
  async reserve(ownerId: string, hash: string, size: number): Promise<Release> {
    const none: Release = async () => {};
    const limit = await this.limit(ownerId);
    if (limit === 0 || (await this.holds(ownerId, hash))) return none;
    const id = newId();
    const now = Date.now();
    const insert = sql`
      insert into quota_reservations (id, owner_id, kind, bytes, created_at)
      select cast(${id} as text), cast(${ownerId} as text), 'library', cast(${size} as bigint), cast(${now} as bigint)
      where (
        select coalesce(sum(d.size), 0) from (
          select distinct b.hash, b.size from library_versions v
          join library_items i on i.id = v.item_id
          join library_blobs b on b.hash = v.blob_hash
          where i.owner_id = ${ownerId}
        ) d
      ) + (
        select coalesce(sum(r.bytes), 0) from quota_reservations r
        where r.owner_id = ${ownerId} and r.kind = 'library' and r.created_at > ${now - RESERVATION_TTL_MS}
      ) + ${size} <= ${limit}`;
    const inserted = await this.db.transaction().execute(async (tx) => {
      // PostgreSQL runs concurrent statements on snapshots: serialise the owner's reservations. SQLite
      // has one writer, and the single statement is atomic there.
      if (this.db.getExecutor().adapter instanceof PostgresAdapter)
        await sql`select pg_advisory_xact_lock(hashtext(${`kiln-library-quota:${ownerId}`}))`.execute(tx);
      await tx
        .deleteFrom('quota_reservations')
        .where('created_at', '<=', now - RESERVATION_TTL_MS)
        .execute();
      return Number((await insert.execute(tx)).numAffectedRows ?? 0);
    });
    if (inserted !== 1) {
      const used = (await this.usage(ownerId)) + (await this.reserved(ownerId));
      throw this.error(used, size, limit);
    }
    let done = false;
    return async () => {
      if (done) return;
      done = true;
      await this.db.deleteFrom('quota_reservations').where('id', '=', id).execute();
    };
  }
}
