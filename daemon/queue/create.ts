/** Picks the queue implementation from the configuration: Redis (scaled mode) when REDIS_URL is set. */
import type { DaemonConfig } from '../config.js';
import { InProcessQueue } from './in-process.js';
import type { JobQueue } from './queue.js';

export async function createQueue(config: DaemonConfig, instanceId: string): Promise<JobQueue> {
  if (!config.redisUrl) return new InProcessQueue(config.jobConcurrency);
  const { RedisJobQueue } = await import('./redis.js');
  return RedisJobQueue.open({
    url: config.redisUrl,
    prefix: config.redisPrefix,
    concurrency: config.jobConcurrency,
    instanceId,
    heartbeatMs: config.heartbeatMs,
  });
}
