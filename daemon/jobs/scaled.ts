/**
 * Scaled mode (several instances, a shared queue): cancelling a job another instance holds, handing
 * a job back to the queue when this instance stops, and the reaper that records as failed the jobs of
 * instances that stopped sending heartbeats.
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { KilnError } from '../../src/core/errors.js';
import type { DistributedQueue } from '../queue/queue.js';
import type { Store } from '../store/db.js';
import { getJob, isFinal, type JobRow } from '../store/jobs.js';
import type { JobEvents } from './events.js';
import { failureRecord } from './records.js';

/** How long a cancel waits for the instance running the job to confirm before ending the record itself. */
const CANCEL_CONFIRM_MS = 10_000;
/** A queued job that no queue holds and no live instance owns is given up after this long. */
const ORPHAN_QUEUED_MS = 60_000;

export interface ScaledDeps {
  db: Store['db'];
  shared: DistributedQueue;
  events: JobEvents;
  jobsDir: string;
  /** Records a job's failed end (and tells its streams) unless it has ended already. */
  fail(id: string, workDir: string, e: unknown): Promise<unknown>;
  /** Removes what the job stored in object storage (nothing with local storage). */
  removeObjects(id: string): Promise<void>;
}

/**
 * Ends a job that is still queued (only then, and with `instanceId` only while that instance owns it:
 * a worker's claim changes both), tells its streams and removes its files. False when it was not.
 */
async function endQueued(deps: ScaledDeps, row: JobRow, err: KilnError, instanceId?: string): Promise<boolean> {
  let q = deps.db.updateTable('jobs').set(failureRecord(err)).where('id', '=', row.id).where('status', '=', 'queued');
  if (instanceId) q = q.where('instance_id', '=', instanceId);
  if (Number((await q.executeTakeFirst()).numUpdatedRows) === 0) return false;
  // Files first: a client told of the end finds nothing of the job left.
  await rm(row.work_dir ?? path.join(deps.jobsDir, row.id), { recursive: true, force: true });
  await deps.removeObjects(row.id).catch(() => {});
  deps.events.publish(row.id, { type: 'failed', error: err.toJSON().error });
  return true;
}

/**
 * A job this instance does not run: a queued one is ended here (the worker that would take it finds
 * it cancelled and skips it); a running one is aborted by its instance on the cancel message, and
 * ended here if that instance does not confirm in time (it died).
 */
export async function cancelElsewhere(deps: ScaledDeps, row: JobRow): Promise<void> {
  const { db, shared, events } = deps;
  const final = events.finalEvent(row.id);
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const err = new KilnError('CANCELLED', 'The run was cancelled.');
    if (await endQueued(deps, row, err)) {
      // Both best effort (the record is what a worker goes by): with Redis away each gives up after 5 s, together.
      await Promise.all([
        shared.remove(row.id).catch(() => false),
        // A run pinned to its instance waits in that instance's local queue: the message drops it there.
        shared.publishCancel(row.id).catch(() => {}),
      ]);
      return;
    }
    await shared.publishCancel(row.id);
    await Promise.race([final.done, new Promise((resolve) => (timer = setTimeout(resolve, CANCEL_CONFIRM_MS)))]);
    const now = await getJob(db, row.id);
    if (now && !isFinal(now.status)) await deps.fail(row.id, row.work_dir ?? path.join(deps.jobsDir, row.id), err);
  } finally {
    clearTimeout(timer);
    final.dispose();
  }
}

/**
 * A job this instance was running when it stopped (SIGTERM after the grace period): back to queued,
 * so the worker that takes it from the shared queue next claims it and runs it from the start. False
 * when it is no longer this instance's running job (cancelled or ended meanwhile).
 */
export async function handBack(deps: ScaledDeps, id: string, instanceId: string): Promise<boolean> {
  const r = await deps.db
    .updateTable('jobs')
    .set({ status: 'queued', progress: 0, stage: 'queued', started_at: null })
    .where('id', '=', id)
    .where('status', '=', 'running')
    .where('instance_id', '=', instanceId)
    .executeTakeFirst();
  if (Number(r.numUpdatedRows) === 0) return false;
  deps.events.publish(id, { type: 'progress', percent: 0, stage: 'queued' });
  return true;
}

/**
 * Jobs whose instance stopped sending heartbeats can never finish: any instance that notices records
 * them as failed. A queued job is only given up when no queue holds it any more.
 */
export class Reaper {
  /** Jobs found orphaned, with when: the reaper acts on a later pass, not this one. */
  private suspects = new Map<string, number>();

  constructor(
    private readonly deps: ScaledDeps,
    private readonly heartbeatMs: number,
  ) {}

  async reap(): Promise<number> {
    const { db, shared } = this.deps;
    // Running and queued apart, queued ones only once old enough to be given up: one list of the oldest
    // thousand of both never reached a running orphan behind a backlog of waiting jobs.
    const unfinished = (status: 'queued' | 'running') => {
      let q = db.selectFrom('jobs').selectAll().where('status', '=', status);
      if (status === 'queued') q = q.where('created_at', '<', Date.now() - ORPHAN_QUEUED_MS);
      return q.orderBy('created_at').limit(1000).execute();
    };
    const rows = [...(await unfinished('running')), ...(await unfinished('queued'))];
    const alive = new Map<string, boolean>();
    const isAlive = async (instance: string) => {
      if (!alive.has(instance)) alive.set(instance, await shared.isAlive(instance));
      return alive.get(instance)!;
    };
    let n = 0;
    const seen = new Set<string>();
    for (const row of rows) {
      if (row.status === 'running' && (await isAlive(row.instance_id))) continue;
      if (row.status === 'queued' && ((await isAlive(row.instance_id)) || (await shared.has(row.id)))) continue;
      seen.add(row.id);
      // Seen orphaned twice, a beat apart: an instance whose key lapsed while Redis was away beats again first.
      const since = this.suspects.get(row.id);
      if (since === undefined) this.suspects.set(row.id, Date.now());
      if (since === undefined || Date.now() - since < this.heartbeatMs) continue;
      await this.deps.fail(
        row.id,
        row.work_dir ?? path.join(this.deps.jobsDir, row.id),
        new KilnError('INTERNAL', 'The daemon instance that was running this job stopped; run it again.', { reason: 'daemon-restarted' }),
      );
      this.suspects.delete(row.id);
      n++;
    }
    for (const id of [...this.suspects.keys()]) if (!seen.has(id)) this.suspects.delete(id);
    return n;
  }
}

/**
 * This instance's queued jobs that the shared queue lost (Redis flushed, or restarted without
 * persistence, while this instance lived: the reaper only looks at jobs of dead instances). Their
 * inputs and validated settings lived only in the queue's entry, so they cannot be queued again: they
 * are failed (`UNAVAILABLE`, reason `queue-lost`) and their files removed. Jobs this instance still
 * holds itself (storing inputs before the enqueue, its local queue) are not the queue's to hold.
 */
export class LostJobs {
  /** Jobs found missing, with when: failed on a later pass, so an enqueue or claim in flight settles first. */
  private suspects = new Map<string, number>();

  constructor(
    private readonly deps: ScaledDeps,
    private readonly instanceId: string,
    private readonly heartbeatMs: number,
    /** Whether this instance holds the job itself (not yet handed to the shared queue, or run here). */
    private readonly heldHere: (id: string) => boolean,
  ) {}

  async check(): Promise<number> {
    const rows = await this.deps.db
      .selectFrom('jobs')
      .selectAll()
      .where('status', '=', 'queued')
      .where('instance_id', '=', this.instanceId)
      .orderBy('created_at')
      .limit(1000)
      .execute();
    const candidates = rows.filter((r) => !this.heldHere(r.id));
    const missing = new Set(await this.deps.shared.missing(candidates.map((r) => r.id)));
    let n = 0;
    for (const row of candidates) {
      if (!missing.has(row.id)) continue;
      const since = this.suspects.get(row.id);
      if (since === undefined) this.suspects.set(row.id, Date.now());
      if (since === undefined || Date.now() - since < this.heartbeatMs) continue;
      this.suspects.delete(row.id);
      const err = new KilnError(
        'UNAVAILABLE',
        'The job queue (Redis) lost this job before any instance ran it (its data was flushed or it restarted without persistence); run it again.',
        { reason: 'queue-lost' },
      );
      if (await endQueued(this.deps, row, err, this.instanceId)) n++;
    }
    for (const id of [...this.suspects.keys()]) if (!missing.has(id)) this.suspects.delete(id);
    return n;
  }
}
