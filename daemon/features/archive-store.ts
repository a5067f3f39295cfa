/**
 * Bundle archives in object storage, for scaled mode: the installer (src/ai/install/queue.ts) keeps
 * what one instance installed as `bundles/<bundle>/<version>/<sha256>.tar`, and another instance that
 * lacks the bundle installs from it. The key names the archive's SHA-256, checked again on every
 * fetch (a truncated or altered object is refused); importBundle then verifies each file and runtime
 * tarball against the pins, as for an admin's import.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import type { BundleArchiveStore } from '../../src/ai/install/archive-store.js';
import { KilnError } from '../../src/core/errors.js';
import { type ObjectInfo, type ObjectStorage, objectKey } from '../storage/storage.js';

async function sha256Of(file: string): Promise<string> {
  const h = createHash('sha256');
  await pipeline(createReadStream(file), h);
  return h.digest('hex');
}

const DIGEST_NAME = /\/([0-9a-f]{64})\.tar$/;

export function objectArchiveStore(storage: ObjectStorage): BundleArchiveStore {
  const prefix = (bundle: string, version: string) => `${objectKey('bundles', bundle, version)}/`;
  /** The newest archive kept for the version (an older one is removed by put, unless put died between). */
  const newest = async (bundle: string, version: string): Promise<ObjectInfo | undefined> => {
    let best: ObjectInfo | undefined;
    for await (const o of storage.list(prefix(bundle, version))) {
      if (DIGEST_NAME.test(o.key) && (!best || o.modifiedAt > best.modifiedAt)) best = o;
    }
    return best;
  };
  return {
    async put(bundle, version, file) {
      const key = objectKey('bundles', bundle, version, `${await sha256Of(file)}.tar`);
      await storage.putFile(key, file, { contentType: 'application/x-tar' });
      const older: string[] = [];
      for await (const o of storage.list(prefix(bundle, version))) if (o.key !== key) older.push(o.key);
      for (const k of older) await storage.delete(k);
    },
    async drop(bundle) {
      const keys: string[] = [];
      for await (const o of storage.list(`${objectKey('bundles', bundle)}/`)) keys.push(o.key);
      for (const k of keys) await storage.delete(k);
    },
    async has(bundle, version) {
      return !!(await newest(bundle, version));
    },
    async get(bundle, version, dest) {
      const o = await newest(bundle, version);
      if (!o) return false;
      await storage.download(o.key, dest);
      const want = DIGEST_NAME.exec(o.key)![1];
      const got = await sha256Of(dest);
      if (got !== want) {
        await rm(dest, { force: true });
        throw new KilnError('UNAVAILABLE', `The archive ${o.key} in object storage has SHA-256 ${got}, not the ${want} it is kept under.`, {
          reason: 'digest-mismatch',
        });
      }
      return true;
    },
  };
}
