/**
 * Content-addressed storage: each distinct content (sha256) is one file under
 * DATA_DIR/library/blobs, shared by every version that holds it and counted in library_blobs.refs.
 * Changes to one hash are serialised in this process so a release to 0 cannot race a new reference.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.js';
import { KeyedMutex } from './mutex.js';
import './schema.js';

export function libraryDir(dataDir: string): string {
  return path.join(dataDir, 'library');
}

export async function hashFile(p: string): Promise<string> {
  const h = createHash('sha256');
  await pipeline(createReadStream(p), h);
  return h.digest('hex');
}

export class BlobStore {
  private locks = new KeyedMutex();

  constructor(
    private readonly db: Kysely<Database>,
    readonly dir: string,
  ) {}

  pathOf(hash: string): string {
    return path.join(this.dir, hash.slice(0, 2), hash);
  }

  /** A scratch directory on the same file system, so adding a blob is a rename. */
  async tmpDir(): Promise<string> {
    const d = path.join(this.dir, '..', 'tmp');
    await mkdir(d, { recursive: true });
    return d;
  }

  private serial<T>(hash: string, fn: () => Promise<T>): Promise<T> {
    return this.locks.run(hash, fn);
  }

  /**
   * Adds one reference to the content of `file`, moving it into the store when the content is new
   * (`move`) or copying it otherwise; the caller's file is consumed when `move` is set.
   */
  async add(file: string, hash: string, size: number, opts: { move: boolean }): Promise<void> {
    await this.serial(hash, async () => {
      const existing = await this.db.selectFrom('library_blobs').select('refs').where('hash', '=', hash).executeTakeFirst();
      if (existing) {
        await this.db
          .updateTable('library_blobs')
          .set({ refs: existing.refs + 1 })
          .where('hash', '=', hash)
          .execute();
        if (opts.move) await rm(file, { force: true });
        return;
      }
      const dest = this.pathOf(hash);
      await mkdir(path.dirname(dest), { recursive: true });
      if (opts.move) {
        await rename(file, dest);
      } else {
        // Copy beside the destination first so a crash never leaves a half-written blob under its hash.
        const tmp = `${dest}.${process.pid}.tmp`;
        await pipeline(createReadStream(file), createWriteStream(tmp));
        await rename(tmp, dest);
      }
      await this.db.insertInto('library_blobs').values({ hash, size, refs: 1, created_at: Date.now() }).execute();
    });
  }

  /** Adds a reference to content already stored (a restore). */
  async ref(hash: string): Promise<void> {
    await this.serial(hash, async () => {
      const r = await this.db
        .updateTable('library_blobs')
        .set((eb) => ({ refs: eb('refs', '+', 1) }))
        .where('hash', '=', hash)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) === 0) throw new Error(`blob ${hash} is missing`);
    });
  }

  /** Drops one reference; the content goes when nobody holds it any more. */
  async release(hash: string): Promise<void> {
    await this.serial(hash, async () => {
      const row = await this.db.selectFrom('library_blobs').select('refs').where('hash', '=', hash).executeTakeFirst();
      if (!row) return;
      if (row.refs > 1) {
        await this.db
          .updateTable('library_blobs')
          .set({ refs: row.refs - 1 })
          .where('hash', '=', hash)
          .execute();
        return;
      }
      await this.db.deleteFrom('library_blobs').where('hash', '=', hash).execute();
      await rm(this.pathOf(hash), { force: true });
    });
  }
}
