/**
 * Content-addressed storage: each distinct content (sha256) is one object, `library/blobs/<hh>/<hash>`
 * in the object storage (daemon/storage), shared by every version that holds it and counted in
 * library_blobs.refs. Every change of a count is one conditional UPDATE in the database, so several
 * daemon instances can add and release the same content at once:
 *
 * - add: one more reference to ready content; otherwise a `pending` row is written first (with the
 *   time), the object uploaded, and the row made `ready` with its reference in one statement.
 * - release: one reference less; at 0 the row is claimed (`deleting`, only while still at 0) before the
 *   object is removed, so no add can take a reference meanwhile (an add that finds the row deleting
 *   waits for it to go, then writes the content anew). What a failed removal leaves, the sweep retries.
 * - pending rows older than PENDING_GRACE_MS (a writer that died) and objects without any row (an
 *   upload that finished after its row was swept) are removed by the same sweep.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Kysely } from 'kysely';
import { KilnError } from '../../src/core/errors.js';
import type { ObjectStorage, ByteRange } from '../storage/storage.js';
import type { Database } from '../store/schema.js';
import './schema.js';

/** An upload slower than this is taken for a dead writer's and swept. */
export const PENDING_GRACE_MS = 3_600_000;
/** Content left at 0 references (its removal failed, or the instance died in between) is swept after this. */
export const RELEASED_GRACE_MS = 60_000;
const BLOB_PREFIX = 'library/blobs/';

export function libraryDir(dataDir: string): string {
  return path.join(dataDir, 'library');
}

export async function hashFile(p: string): Promise<string> {
  const h = createHash('sha256');
  await pipeline(createReadStream(p), h);
  return h.digest('hex');
}

export interface BlobSweep {
  released: number;
  stalePending: number;
  orphanObjects: number;
}

export class BlobStore {
  constructor(
    private readonly db: Kysely<Database>,
    readonly storage: ObjectStorage,
    /** Scratch space for uploads on their way in (on the same file system as local storage: a rename). */
    private readonly scratch: string,
  ) {}

  keyOf(hash: string): string {
    return `${BLOB_PREFIX}${hash.slice(0, 2)}/${hash}`;
  }

  /** The content's file on this machine; local storage only (the CLI on a data dir). */
  pathOf(hash: string): string {
    if (!this.storage.localPath) throw new KilnError('INTERNAL', 'Library content is in object storage, not on this disk.');
    return this.storage.localPath(this.keyOf(hash));
  }

  async tmpDir(): Promise<string> {
    await mkdir(this.scratch, { recursive: true });
    return this.scratch;
  }

  open(hash: string, range?: ByteRange): Promise<Readable> {
    return this.storage.get(this.keyOf(hash), range);
  }

  /** A short-lived URL of the content in the bucket, when the storage is set to hand those out. */
  presignedUrl(hash: string, opts: { disposition?: string; contentType?: string }): Promise<string | undefined> {
    return this.storage.presign?.(this.keyOf(hash), { expiresS: 300, ...opts }) ?? Promise.resolve(undefined);
  }

  /** Copies the content to a file (tool inputs: a tool can never alter stored content). */
  copyTo(hash: string, file: string): Promise<void> {
    return this.storage.download(this.keyOf(hash), file);
  }

  /** One more reference to content that is stored and ready; false when there is no such content. */
  private async bump(hash: string): Promise<boolean> {
    const r = await this.db
      .updateTable('library_blobs')
      .set((eb) => ({ refs: eb('refs', '+', 1), touched_at: Date.now() }))
      .where('hash', '=', hash)
      .where('state', '=', 'ready')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /**
   * Adds one reference to the content of `file`, uploading it when the content is new; the caller's
   * file is consumed when `move` is set.
   */
  async add(file: string, hash: string, size: number, opts: { move: boolean }): Promise<void> {
    for (let attempt = 0; attempt < 200; attempt++) {
      if (await this.bump(hash)) {
        if (opts.move) await rm(file, { force: true });
        return;
      }
      const now = Date.now();
      await this.db
        .insertInto('library_blobs')
        .values({ hash, size, refs: 0, created_at: now, state: 'pending', touched_at: now })
        .onConflict((oc) => oc.column('hash').doNothing())
        .execute();
      const row = await this.db.selectFrom('library_blobs').select('state').where('hash', '=', hash).executeTakeFirst();
      if (!row || row.state === 'ready') continue;
      if (row.state === 'deleting') {
        // A sweep is removing this content: once its row is gone, the content is written anew.
        await new Promise((r) => setTimeout(r, 50));
        continue;
      }
      // Pending: ours, or another instance's upload of the same content. Writing the same bytes under
      // the same key again is harmless; the fresh time tells the sweep a writer is alive.
      await this.db
        .updateTable('library_blobs')
        .set({ touched_at: Date.now() })
        .where('hash', '=', hash)
        .where('state', '=', 'pending')
        .execute();
      await this.storage.putFile(this.keyOf(hash), file, { move: opts.move });
      const done = await this.db
        .updateTable('library_blobs')
        .set((eb) => ({ refs: eb('refs', '+', 1), state: 'ready', touched_at: Date.now() }))
        .where('hash', '=', hash)
        .where('state', 'in', ['pending', 'ready'])
        .executeTakeFirst();
      if (Number(done.numUpdatedRows) > 0) return;
      // The row was swept while the upload ran (it outlived PENDING_GRACE_MS): the object is an orphan
      // the next sweep removes, and the caller's file may be gone.
      throw new KilnError('UNAVAILABLE', 'Storing the file took too long and was given up; upload it again.', { reason: 'blob-swept' });
    }
    throw new KilnError('UNAVAILABLE', 'The file library is busy with this content; try again in a moment.');
  }

  /** Adds a reference to content already stored (a restore). */
  async ref(hash: string): Promise<void> {
    if (!(await this.bump(hash))) throw new Error(`blob ${hash} is missing`);
  }

  /** Drops one reference; content nobody holds any more is removed (or, if that fails, by a later sweep). */
  async release(hash: string): Promise<void> {
    await this.db
      .updateTable('library_blobs')
      .set((eb) => ({ refs: eb('refs', '-', 1), touched_at: Date.now() }))
      .where('hash', '=', hash)
      .where('refs', '>', 0)
      .execute();
    await this.remove(hash, 'ready').catch(() => {});
  }

  /**
   * Removes content at 0 references, claiming its row first (ready → deleting, only if still at 0):
   * an add that comes meanwhile either took its reference before (the claim fails) or waits for the
   * row to go. `touchedAt` narrows the claim to the row as read by a sweep.
   */
  private async remove(hash: string, state: 'ready' | 'pending' | 'deleting', touchedAt?: number): Promise<boolean> {
    let q = this.db
      .updateTable('library_blobs')
      .set({ state: 'deleting', touched_at: Date.now() })
      .where('hash', '=', hash)
      .where('state', '=', state)
      .where('refs', '=', 0);
    if (touchedAt !== undefined) q = q.where('touched_at', '=', touchedAt);
    if (Number((await q.executeTakeFirst()).numUpdatedRows) === 0) return false;
    try {
      await this.storage.delete(this.keyOf(hash));
    } catch (e) {
      // Left at 0 references for the sweep to try again.
      await this.db.updateTable('library_blobs').set({ state: 'ready' }).where('hash', '=', hash).where('state', '=', 'deleting').execute();
      throw e;
    }
    await this.db.deleteFrom('library_blobs').where('hash', '=', hash).where('state', '=', 'deleting').execute();
    return true;
  }

  /**
   * Removes content nobody holds (released more than `releasedMs` ago), pending rows of writers that
   * died, and objects without a row. Safe to run on several instances at once; one at a time is enough
   * (daemon/jobs/upkeep.ts runs it on one).
   */
  async sweep(now = Date.now(), releasedMs = RELEASED_GRACE_MS, pendingMs = PENDING_GRACE_MS): Promise<BlobSweep> {
    const out: BlobSweep = { released: 0, stalePending: 0, orphanObjects: 0 };
    const rows = await this.db
      .selectFrom('library_blobs')
      .select(['hash', 'state', 'touched_at'])
      .where((eb) =>
        eb.or([
          eb.and([eb('refs', '=', 0), eb('state', '=', 'ready'), eb('touched_at', '<', now - releasedMs)]),
          eb.and([eb('state', 'in', ['pending', 'deleting']), eb('touched_at', '<', now - pendingMs)]),
        ]),
      )
      .limit(500)
      .execute();
    for (const row of rows) {
      // Claimed only if nothing changed since it was read: a reference taken meanwhile keeps it.
      if (!(await this.remove(row.hash, row.state, Number(row.touched_at)))) continue;
      if (row.state === 'ready') out.released++;
      else out.stalePending++;
    }
    for await (const o of this.storage.list(BLOB_PREFIX)) {
      if (now - o.modifiedAt < pendingMs) continue;
      const hash = o.key.slice(o.key.lastIndexOf('/') + 1);
      if (o.key !== this.keyOf(hash)) continue;
      // A deleting row claims the hash first, so an add that starts now waits instead of writing an
      // object this sweep is about to remove.
      const t = Date.now();
      const claimed = await this.db
        .insertInto('library_blobs')
        .values({ hash, size: o.size, refs: 0, created_at: t, state: 'deleting', touched_at: t })
        .onConflict((oc) => oc.column('hash').doNothing())
        .executeTakeFirst();
      if (Number(claimed.numInsertedOrUpdatedRows ?? 0) === 0) continue;
      await this.storage.delete(o.key);
      await this.db.deleteFrom('library_blobs').where('hash', '=', hash).where('state', '=', 'deleting').execute();
      out.orphanObjects++;
    }
    return out;
  }
}
