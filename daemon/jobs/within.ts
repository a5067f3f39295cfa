/** Waiting on a job for a bounded time (the synchronous window, `Prefer: wait=N`). */
import type { Kysely } from 'kysely';
import { KilnError } from '../../src/core/errors.js';
import type { Database } from '../store/schema.js';
import { getJob, isFinal, type JobRow } from '../store/jobs.js';
import type { JobEvents } from './events.js';

/** `p`'s value, or undefined when `ms` pass first; the timer never outlives the race. */
export async function within<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const timeout = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), ms);
    });
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export interface WaitFrom {
  db: Kysely<Database>;
  events: JobEvents;
  /** The run's end when this instance runs it. */
  settled?: Promise<JobRow | undefined>;
  /** Scaled mode: another instance may run it; its final event says when it ends. */
  scaled: boolean;
}

/**
 * The finished row, or undefined when the job is still going after `ms`. NOT_FOUND when its record is
 * gone (its owner deleted meanwhile): "still going" then made a caller that waits in a loop (an MCP
 * call) ask again at once, for ever.
 */
export async function waitForJob(o: WaitFrom, id: string, ms: number): Promise<JobRow | undefined> {
  if (!o.settled && o.scaled && ms > 0) return waitShared(o, id, ms);
  if (!o.settled) {
    const row = await existing(o.db, id);
    return isFinal(row.status) ? row : undefined;
  }
  if (ms <= 0) return undefined;
  const row = await within(o.settled, ms);
  if (row) return row;
  await existing(o.db, id);
  return undefined;
}

async function existing(db: Kysely<Database>, id: string): Promise<JobRow> {
  const row = await getJob(db, id);
  if (!row) throw new KilnError('NOT_FOUND', `Job ${id} no longer exists (its owner was deleted, or its record expired).`);
  return row;
}

/** Scaled mode: a job another instance runs ends when its final event arrives (or the row says so). */
async function waitShared(o: WaitFrom, id: string, ms: number): Promise<JobRow | undefined> {
  const final = o.events.finalEvent(id);
  try {
    const before = await existing(o.db, id);
    if (isFinal(before.status)) return before;
    await within(final.done, ms);
    const row = await existing(o.db, id);
    return isFinal(row.status) ? row : undefined;
  } finally {
    final.dispose();
  }
}
