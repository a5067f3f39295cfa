/** Picks the queue implementation from the configuration. */
import type { DaemonConfig } from '../config.js';
import { InProcessQueue } from './in-process.js';
import type { JobQueue } from './queue.js';

/**
 * Only the in-process queue exists so far: a Redis queue needs inputs and outputs on storage every
 * instance can reach, which the local-disk blob store does not give. REDIS_URL is reported, not used.
 */
export async function createQueue(config: DaemonConfig, warn: (msg: string) => void): Promise<JobQueue> {
  if (config.redisUrl) warn('REDIS_URL is set, but the Redis queue is not available in this version; jobs run in this process.');
  return new InProcessQueue(config.jobConcurrency);
}
