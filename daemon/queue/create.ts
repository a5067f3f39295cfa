/** Picks the queue implementation from the configuration. */
import type { DaemonConfig } from '../config.js';
import { InProcessQueue } from './in-process.js';
import type { JobQueue } from './queue.js';

export async function createQueue(config: DaemonConfig): Promise<JobQueue> {
  return new InProcessQueue(config.jobConcurrency);
}
