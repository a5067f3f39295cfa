/**
 * Where blobs live: job inputs and outputs, library content, batch archives. One interface, two
 * implementations: a directory on local disk (the default, and the shared volume of older scaled
 * deployments) and an S3-compatible bucket (`S3_*`, daemon/storage/s3.ts). Keys are relative,
 * slash-separated paths such as `library/blobs/ab/<sha256>` or `jobs/<id>/out/<name>`.
 */
import type { Readable } from 'node:stream';

export interface ObjectInfo {
  key: string;
  size: number;
  /** Epoch ms of the last write. */
  modifiedAt: number;
}

export interface ByteRange {
  start: number;
  /** Inclusive, as in HTTP Range. */
  end: number;
}

export interface PutOptions {
  contentType?: string;
  /** Local disk only: the source file may be moved into place instead of copied. */
  move?: boolean;
}

export interface ObjectStorage {
  readonly kind: 'local' | 's3';
  /** Writes a whole object from a file on local disk; readers never see a half-written object. */
  putFile(key: string, file: string, opts?: PutOptions): Promise<void>;
  /** Writes a whole object from a stream (large ones in parts). */
  putStream(key: string, body: Readable, opts?: PutOptions): Promise<void>;
  /** The object's bytes, or one range of them; KilnError NOT_FOUND when it is missing. */
  get(key: string, range?: ByteRange): Promise<Readable>;
  /** Copies the object to a file on local disk (tool inputs). */
  download(key: string, file: string): Promise<void>;
  head(key: string): Promise<ObjectInfo | undefined>;
  /** Removing a missing object is not an error. */
  delete(key: string): Promise<void>;
  /** Every object under the prefix (for sweeping and counting). */
  list(prefix: string): AsyncIterable<ObjectInfo>;
  /** A time-limited URL a client can fetch the object from directly; undefined when not offered. */
  presign?(key: string, opts: { expiresS: number; disposition?: string; contentType?: string }): Promise<string | undefined>;
  /** The object's path when it is a file on this machine (local disk only). */
  localPath?(key: string): string;
  /** Readiness: the store answers. */
  ping(): Promise<void>;
  /** What admin/health shows (no secrets). */
  describe(): Record<string, unknown>;
  close(): Promise<void>;
}

/** Removes every object under a prefix; how many went. */
export async function deletePrefix(storage: ObjectStorage, prefix: string): Promise<number> {
  let n = 0;
  for await (const o of storage.list(prefix)) {
    await storage.delete(o.key);
    n++;
  }
  return n;
}

/** A key from path segments; refuses anything that could leave the store's root. */
export function objectKey(...parts: string[]): string {
  const key = parts.join('/');
  if (key.split('/').some((s) => s === '..' || s === '.' || s === '') || key.includes('\\') || key.includes('\0'))
    throw new Error(`invalid object key ${JSON.stringify(key)}`);
  return key;
}
