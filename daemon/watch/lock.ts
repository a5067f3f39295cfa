/**
 * One instance per watch folder in scaled mode: a Redis key per folder, set only if absent and renewed
 * while held (a compare-and-set renewal, so an instance that lost it never extends another's). A dead
 * instance's lease lapses after TTL_MS and another takes the folder. Without Redis there is one
 * instance and the lease is always held.
 */
import type { Redis } from 'ioredis';

const TTL_MS = 15_000;
export const RENEW_MS = 5_000;

const RENEW = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

export interface FolderLeases {
  /** True when this instance holds (or just took) the folder. */
  hold(folderId: string): Promise<boolean>;
  release(folderId: string): Promise<void>;
  close(): Promise<void>;
}

export function localLeases(): FolderLeases {
  return { hold: async () => true, release: async () => {}, close: async () => {} };
}

export async function redisLeases(url: string, prefix: string, instanceId: string): Promise<FolderLeases> {
  const { Redis } = await import('ioredis');
  const redis: Redis = new Redis(url, { maxRetriesPerRequest: 2, lazyConnect: true });
  await redis.connect();
  const key = (id: string) => `${prefix}:watch-folder:${id}`;
  return {
    async hold(id) {
      const renewed = await redis.eval(RENEW, 1, key(id), instanceId, String(TTL_MS));
      if (renewed === 1) return true;
      return (await redis.set(key(id), instanceId, 'PX', TTL_MS, 'NX')) === 'OK';
    },
    async release(id) {
      await redis.eval(RELEASE, 1, key(id), instanceId).catch(() => {});
    },
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
