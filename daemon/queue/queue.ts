/**
 * The job queue interface: runs tasks with bounded concurrency and can cancel them. The in-process
 * implementation is the default; the Redis one (scaled mode) keeps the same contract for tasks that
 * must run here (batch items, runs with a local follow-up) and adds a shared queue of serialisable
 * jobs that any instance's worker picks up.
 */
import type { ToolInputs } from '../../src/core/tool.js';
import type { Role } from '../store/schema.js';

export interface QueueState {
  kind: 'in-process' | 'redis';
  concurrency: number;
  running: number;
  queued: number;
  /** Scaled mode: the shared queue's counts over every instance. */
  shared?: { waiting: number; active: number };
}

export interface JobQueue {
  /**
   * Runs task when a slot is free. Rejects with KilnError CANCELLED when cancelled before it starts;
   * once started, cancellation aborts the signal and the task decides how to end.
   */
  run<T>(jobId: string, task: (signal: AbortSignal) => Promise<T>): Promise<T>;
  /**
   * Takes a free slot for `jobId` now, when one is free and nothing waits, so that its run() starts at
   * once: the job can be recorded as running from the start (one database write fewer than queued and
   * then claimed). False when the run would have to wait. Absent: no reservations (Redis).
   */
  reserve?(jobId: string): boolean;
  /** Gives back a slot reserve() took whose run() will not come (recording the job failed). */
  unreserve?(jobId: string): void;
  /** True when the job was queued or running here. */
  cancel(jobId: string): boolean;
  state(): QueueState;
  /** Scaled mode: the shared queue's counts (a round trip to Redis). */
  sharedCounts?(): Promise<QueueState['shared']>;
  /**
   * Scaled mode: whether this instance leads the periodic task `name` (the sweep, the reaper), taking
   * or renewing a lease that lapses `ttlMs` after its holder stops renewing it. Absent: one instance, it
   * always leads.
   */
  lead?(name: string, ttlMs: number): Promise<boolean>;
  /** Quick readiness check (the backing store answers). */
  ping(): Promise<void>;
  /** Scaled mode: stops taking jobs from the shared queue (draining); jobs already here go on. */
  stopIntake?(): Promise<void>;
  /** Stops taking work and aborts what runs. */
  close(): Promise<void>;
}

/** What a worker's handler answers: done (however the job ended), or handed back to the queue for another instance. */
export type WorkerOutcome = void | 'hand-back';

/** What a worker on any instance needs to run a job; the rest is in the job's database row. */
export interface QueuedJob {
  id: string;
  /** Catalog tool or preset id (daemon/jobs/targets.ts). */
  target: string;
  /** Validated settings, secrets included: the record in the database has them redacted. */
  settings: Record<string, unknown>;
  /** Paths under the shared directory, the same on every instance. */
  inputs: ToolInputs;
  workDir: string;
  ownerId: string;
  /** S3 mode: `inputs` name object keys (daemon/storage/job-files.ts), fetched by the worker. */
  stored?: boolean;
  /** Save the output to this file library item as a new version, as this viewer. */
  saveToFile?: { fileId: string; viewer: { id: string; role: Role } };
  /** A pipeline run: the definition the worker rebuilds the target from (secrets included). */
  pipeline?: { raw: unknown; name?: string };
  /** A batch: every input run on its own, the outputs in one ZIP (daemon/jobs/batch-job.ts). */
  batch?: true;
}

/** A message every instance receives (job events, cancel requests). */
export type BusHandler = (message: string) => void;

export interface DistributedQueue extends JobQueue {
  readonly distributed: true;
  enqueue(job: QueuedJob): Promise<void>;
  /** Takes a job out of the shared queue if no worker has it yet; false otherwise. */
  remove(jobId: string): Promise<boolean>;
  /** Whether the shared queue still holds the job (waiting or active). */
  has(jobId: string): Promise<boolean>;
  /** Of these jobs, the ones the shared queue does not hold (one round trip for all). */
  missing(jobIds: string[]): Promise<string[]>;
  /**
   * Starts this instance's worker; `signal` aborts on a cancel from any instance or on close. A handler
   * answering 'hand-back' puts the job back in the shared queue (a shutdown) instead of ending it.
   */
  process(handler: (job: QueuedJob, signal: AbortSignal) => Promise<WorkerOutcome>): void;
  publishEvent(message: string): Promise<void>;
  onEvent(fn: BusHandler): void;
  /** Asks every instance to abort the job if it runs it. */
  publishCancel(jobId: string): Promise<void>;
  onCancel(fn: (jobId: string) => void): void;
  /** Whether the instance still sends heartbeats. */
  isAlive(instanceId: string): Promise<boolean>;
}

export function isDistributed(q: JobQueue): q is DistributedQueue {
  return (q as Partial<DistributedQueue>).distributed === true;
}
