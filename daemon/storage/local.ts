/**
 * Objects as files under one directory (DATA_DIR by default, or SHARED_DIR). A write goes to a
 * temporary name beside its destination and is renamed into place, so a reader never sees half of it.
 */
import { randomBytes } from 'node:crypto';
import { constants, createReadStream, createWriteStream } from 'node:fs';
import { copyFile, mkdir, readdir, rename, rm, stat, statfs } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { KilnError } from '../../src/core/errors.js';
import type { ByteRange, ObjectInfo, ObjectStorage, PutOptions } from './storage.js';
import { objectKey } from './storage.js';

export class LocalStorage implements ObjectStorage {
  readonly kind = 'local' as const;

  constructor(readonly root: string) {}

  localPath(key: string): string {
    return path.join(this.root, ...objectKey(key).split('/'));
  }

  private async temp(dest: string): Promise<string> {
    await mkdir(path.dirname(dest), { recursive: true });
    return `${dest}.${randomBytes(6).toString('hex')}.tmp`;
  }

  async putFile(key: string, file: string, opts: PutOptions = {}): Promise<void> {
    const dest = this.localPath(key);
    const tmp = await this.temp(dest);
    try {
      if (opts.move) await rename(file, tmp).catch(() => copyFile(file, tmp, constants.COPYFILE_FICLONE));
      else await copyFile(file, tmp, constants.COPYFILE_FICLONE);
      await rename(tmp, dest);
    } catch (e) {
      await rm(tmp, { force: true });
      throw e;
    }
  }

  async putStream(key: string, body: Readable): Promise<void> {
    const dest = this.localPath(key);
    const tmp = await this.temp(dest);
    try {
      await pipeline(body, createWriteStream(tmp));
      await rename(tmp, dest);
    } catch (e) {
      await rm(tmp, { force: true });
      throw e;
    }
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    const p = this.localPath(key);
    // Opened before returning, so a missing file is NOT_FOUND here rather than a stream error later.
    const s = createReadStream(p, range ? { start: range.start, end: range.end } : {});
    await new Promise<void>((resolve, reject) => {
      s.once('open', () => resolve());
      s.once('error', reject);
    }).catch((e: NodeJS.ErrnoException) => {
      throw e.code === 'ENOENT' ? new KilnError('NOT_FOUND', `Stored object ${key} is missing.`) : e;
    });
    return s;
  }

  async download(key: string, file: string): Promise<void> {
    await copyFile(this.localPath(key), file, constants.COPYFILE_FICLONE).catch((e: NodeJS.ErrnoException) => {
      throw e.code === 'ENOENT' ? new KilnError('NOT_FOUND', `Stored object ${key} is missing.`) : e;
    });
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    const st = await stat(this.localPath(key)).catch(() => undefined);
    return st?.isFile() ? { key, size: st.size, modifiedAt: st.mtimeMs } : undefined;
  }

  async delete(key: string): Promise<void> {
    await rm(this.localPath(key), { force: true });
  }

  async *list(prefix: string): AsyncIterable<ObjectInfo> {
    const base = prefix.replace(/\/+$/, '');
    const walk = async function* (dir: string, rel: string): AsyncIterable<ObjectInfo> {
      const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
      for (const e of entries) {
        const k = rel ? `${rel}/${e.name}` : e.name;
        if (e.isDirectory()) yield* walk(path.join(dir, e.name), k);
        else if (e.isFile() && !e.name.endsWith('.tmp')) {
          const st = await stat(path.join(dir, e.name)).catch(() => undefined);
          if (st) yield { key: k, size: st.size, modifiedAt: st.mtimeMs };
        }
      }
    };
    yield* walk(base ? this.localPath(base) : this.root, base);
  }

  async ping(): Promise<void> {
    await mkdir(this.root, { recursive: true });
    await statfs(this.root);
  }

  describe(): Record<string, unknown> {
    return { kind: 'local', root: this.root };
  }

  async close(): Promise<void> {}
}
