/**
 * Verified downloads into the cache. A file is fetched to a temporary name while its digest is
 * computed, compared with the pin, and only then renamed to its digest-named place: the cache holds
 * nothing unverified, and a cached file is checked again when used (a disk can rot).
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { KilnError } from '../../core/errors.js';
import { ownerMark, sweepAbandoned } from './layout.js';

export interface Digest {
  /** 'sha512' for npm integrity strings, 'sha256' for pinned URLs ('sha1' where upstream publishes only that). */
  algorithm: 'sha1' | 'sha256' | 'sha512';
  /** Encoded as the pin gives it. */
  value: string;
  encoding: 'hex' | 'base64';
}

/** `sha512-<base64>` → Digest. */
export function integrityDigest(integrity: string): Digest {
  const m = /^(sha256|sha512)-([A-Za-z0-9+/=]+)$/.exec(integrity);
  if (!m) throw new Error(`unsupported integrity string ${integrity}`);
  return { algorithm: m[1] as Digest['algorithm'], value: m[2]!, encoding: 'base64' };
}

export type FetchProgress = (bytesDone: number) => void;

function failed(what: string, why: string, reason: string): KilnError {
  return new KilnError('UNAVAILABLE', `Download of ${what} failed: ${why}`, { reason });
}

export async function hashFile(file: string, algorithm: Digest['algorithm'], encoding: Digest['encoding']): Promise<string> {
  const h = createHash(algorithm);
  await pipeline(createReadStream(file), h);
  return h.digest(encoding);
}

/** True when `file` exists with this size and digest. */
export async function verifiedFile(file: string, digest: Digest, size?: number): Promise<boolean> {
  try {
    const st = await stat(file);
    if (size !== undefined && st.size !== size) return false;
    return (await hashFile(file, digest.algorithm, digest.encoding)) === digest.value;
  } catch {
    return false;
  }
}

/** Where the verified copy of `url` (pinned by `digest`) is kept in `cache`. */
export function cachePath(cache: string, url: string, digest: Digest): string {
  const key = createHash('sha256').update(`${digest.algorithm}:${digest.value}`).digest('hex');
  return path.join(cache, `${key}${path.extname(new URL(url).pathname) || '.bin'}`);
}

/**
 * The cached copy of `url`, downloading it when missing. Size and digest are checked before the file
 * is kept; a mismatch fails with reason `digest-mismatch` / `size-mismatch` and keeps nothing.
 */
export async function cachedDownload(opts: {
  url: string;
  what: string;
  digest: Digest;
  size?: number;
  cache: string;
  signal?: AbortSignal;
  onBytes?: FetchProgress;
}): Promise<string> {
  const { url, what, digest, size, cache, signal, onBytes } = opts;
  const file = cachePath(cache, url, digest);
  if (await verifiedFile(file, digest, size)) {
    onBytes?.(size ?? (await stat(file)).size);
    return file;
  }
  await mkdir(cache, { recursive: true });
  // A download killed mid-way left its .part for good; drop those whose process is gone.
  await sweepAbandoned(cache, (name) => name.endsWith('.part'));
  const part = `${file}${ownerMark()}${Date.now()}.part`;
  try {
    let res: Response;
    try {
      res = await fetch(url, { signal, redirect: 'follow' });
    } catch (e) {
      if (signal?.aborted) throw e;
      throw failed(what, `${url} could not be reached (${(e as Error).cause ?? (e as Error).message})`, 'unreachable');
    }
    if (!res.ok || !res.body) throw failed(what, `${url} answered ${res.status}`, 'http-status');
    const h = createHash(digest.algorithm);
    let done = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        done += chunk.length;
        if (size !== undefined && done > size) return cb(failed(what, `more than the pinned ${size} bytes arrived`, 'size-mismatch'));
        h.update(chunk);
        onBytes?.(done);
        cb(null, chunk);
      },
    });
    try {
      await pipeline(Readable.fromWeb(res.body as import('node:stream/web').ReadableStream), meter, createWriteStream(part), { signal });
    } catch (e) {
      if (e instanceof KilnError || signal?.aborted) throw e;
      throw failed(what, `the connection broke after ${done} bytes (${(e as Error).message})`, 'interrupted');
    }
    if (size !== undefined && done !== size) throw failed(what, `${done} bytes arrived, ${size} are pinned`, 'size-mismatch');
    const got = h.digest(digest.encoding);
    if (got !== digest.value) {
      throw failed(what, `its ${digest.algorithm} is ${got}, the pinned digest is ${digest.value}`, 'digest-mismatch');
    }
    await rename(part, file);
    return file;
  } finally {
    await rm(part, { force: true });
  }
}
