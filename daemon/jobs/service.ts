/**
 * Jobs: every HTTP run is persisted, queued, run with runTool, and its progress published. Routes
 * wait on `wait()` for the synchronous window; SSE follows `events`; the sweeper removes old outputs.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { EventEmitter } from 'node:events';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { KilnError, toKilnError, type ErrorCode } from '../../src/core/errors.js';
import type { ToolInputs } from '../../src/core/tool.js';
import { runTool } from '../../src/tools/run-tool.js';
import type { AuthUser } from '../auth/authenticate.js';
import { newId } from '../auth/secrets.js';
import type { DaemonConfig } from '../config.js';
import { isDistributed, type DistributedQueue, type JobQueue, type QueuedJob } from '../queue/queue.js';
import type { Store } from '../store/db.js';
import { deleteJob, expiredJobs, finishJob, getJob, insertJob, isFinal, unfinishedJobs, updateJob, type JobRow } from '../store/jobs.js';
import { deleteExpiredSessions } from '../store/sessions.js';
import { JobEvents } from './events.js';
import { baseToolId, findTarget, type Target } from './targets.js';

export interface SubmitRequest {
  id: string;
  owner: AuthUser;
  target: Target;
  /** Validated settings. */
  settings: Record<string, unknown>;
  inputs: ToolInputs;
  workDir: string;
  clientJobId?: string;
  /** Runs after a successful run (e.g. saving to the file library); its fields join the result. */
  afterSuccess?: (row: JobRow) => Promise<Record<string, unknown> | void>;
}

const PROGRESS_WRITE_MS = 500;
/** Scaled mode: how long a cancel waits for the instance running the job to confirm before ending the record itself. */
const CANCEL_CONFIRM_MS = 10_000;
/** Scaled mode: a queued job that no queue holds and no live instance owns is given up after this long. */
const ORPHAN_QUEUED_MS = 60_000;

/** What a run needs, wherever it runs. */
type RunSpec = Pick<SubmitRequest, 'id' | 'target' | 'settings' | 'inputs' | 'workDir' | 'afterSuccess'>;

const daemonStopped = (what = 'The daemon stopped while this job was running; run it again.') =>
  new KilnError('INTERNAL', what, { reason: 'daemon-restarted' });

/** Settings that must not be kept in job records (passwords for protect/unlock-pdf and the like). */
const SECRET_SETTING = /password|secret|passphrase|token/i;

export function redactSettings(settings: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(settings).map(([k, v]) => [k, SECRET_SETTING.test(k) && v !== undefined && v !== '' ? '[redacted]' : v]),
  );
}

export function downloadUrl(row: Pick<JobRow, 'id' | 'output_name'>): string | undefined {
  return row.output_name ? `/api/v1/download/${row.id}/${encodeURIComponent(row.output_name)}` : undefined;
}

/** The result body of a finished run (HTTP 200 and the SSE `completed` event). */
export function jobResult(row: JobRow): Record<string, unknown> {
  const r: Record<string, unknown> = {
    jobId: row.id,
    downloadUrl: downloadUrl(row),
    originalSize: Number(row.original_size ?? 0),
    processedSize: Number(row.processed_size ?? 0),
  };
  const stored = row.result ? (JSON.parse(row.result) as { data?: unknown; extra?: Record<string, unknown> }) : {};
  if (stored.data !== undefined) r.data = stored.data;
  return { ...r, ...stored.extra };
}

export function jobError(row: JobRow): { code: string; message: string; details?: unknown; reason?: string } {
  return row.error ? JSON.parse(row.error) : { code: 'INTERNAL', message: 'The job failed.' };
}

/**
 * How long a run route waits for its job: the server's synchronous window, or what the client prefers
 * (RFC 7240): `Prefer: respond-async` answers 202 at once, `Prefer: wait=N` waits at most N seconds.
 * `applied` is the preference honoured, for the Preference-Applied header.
 */
export function preferredWait(prefer: string | string[] | undefined, defaultMs: number): { waitMs: number; applied?: string } {
  const tokens = [prefer ?? []]
    .flat()
    .join(',')
    .split(',')
    .map((t) => t.trim().toLowerCase());
  if (tokens.includes('respond-async')) return { waitMs: 0, applied: 'respond-async' };
  const wait = tokens.map((t) => /^wait\s*=\s*(\d{1,6})$/.exec(t)).find(Boolean);
  if (wait) {
    const s = Number(wait[1]);
    return { waitMs: Math.min(s * 1000, defaultMs > 0 ? Math.max(defaultMs, 600_000) : 600_000), applied: `wait=${s}` };
  }
  return { waitMs: defaultMs };
}

/**
 * The answer of a run route: waits up to the synchronous window, then 200 with the result, the job's own
 * error, or 202 `{jobId, async: true, statusUrl, eventsUrl}` (and Location) for the caller to follow.
 */
export async function syncAnswer(
  jobs: JobService,
  id: string,
  waitMs: number,
): Promise<{ status: 200 | 202; body: Record<string, unknown>; headers: Record<string, string> }> {
  const done = await jobs.wait(id, waitMs);
  if (!done) {
    const statusUrl = `/api/v1/jobs/${id}`;
    return {
      status: 202,
      body: { jobId: id, async: true, statusUrl, eventsUrl: `${statusUrl}/progress` },
      headers: { location: statusUrl },
    };
  }
  if (done.status === 'completed') return { status: 200, body: jobResult(done), headers: {} };
  const err = jobError(done);
  throw new KilnError(err.code as ErrorCode, err.message, { details: err.details, reason: err.reason });
}

/** The public JSON view of a job. */
export function jobView(row: JobRow): Record<string, unknown> {
  const ts = (n: number | null) => (n === null ? null : new Date(Number(n)).toISOString());
  return {
    jobId: row.id,
    tool: row.tool,
    baseTool: row.base_tool,
    kind: row.kind,
    ownerId: row.owner_id,
    status: row.status,
    progress: { percent: row.progress, stage: row.stage },
    settings: JSON.parse(row.settings),
    clientJobId: row.client_job_id,
    result: row.status === 'completed' ? jobResult(row) : null,
    error: row.status === 'failed' || row.status === 'cancelled' ? jobError(row) : null,
    outputName: row.output_name,
    contentType: row.content_type,
    originalSize: row.original_size === null ? null : Number(row.original_size),
    processedSize: row.processed_size === null ? null : Number(row.processed_size),
    createdAt: ts(row.created_at),
    startedAt: ts(row.started_at),
    finishedAt: ts(row.finished_at),
  };
}

/** How a job ended, for listeners such as the metrics. */
export interface FinishedJob {
  tool: string;
  kind: string;
  status: string;
  ms?: number;
}

export class JobService {
  readonly events: JobEvents;
  /** Emits 'job' with a FinishedJob when a job this instance ran (or failed) ends. */
  readonly finished = new EventEmitter();
  private settled = new Map<string, Promise<JobRow | undefined>>();
  /** Runs driven outside the queue's single-task model (batch streams): cancel aborts them here. */
  private external = new Map<string, AbortController>();
  private sweeper?: NodeJS.Timeout;
  private closing = false;
  private reaper?: NodeJS.Timeout;
  /** Jobs the reaper found orphaned, with when: it acts on the next pass, not this one. */
  private suspects = new Map<string, number>();
  /** Set in scaled mode: the shared queue, event bus and heartbeats. */
  private readonly shared?: DistributedQueue;

  constructor(
    private readonly store: Store,
    readonly queue: JobQueue,
    private readonly config: DaemonConfig,
    readonly instanceId: string,
    private readonly log: FastifyBaseLogger,
  ) {
    if (isDistributed(queue)) {
      this.shared = queue;
      this.events = new JobEvents({ publish: (m) => queue.publishEvent(m), onMessage: (fn) => queue.onEvent(fn) });
      // A cancel sent to another instance reaches batches driven here.
      queue.onCancel((id) => this.external.get(id)?.abort());
      queue.process((job, signal) => this.runQueued(job, signal));
    } else {
      this.events = new JobEvents();
    }
  }

  /** Scaled mode: jobs run on any instance, events come over the shared bus. */
  get distributed(): boolean {
    return this.shared !== undefined;
  }

  /** Job inputs and outputs: under SHARED_DIR, which every instance of a scaled deployment mounts. */
  get jobsDir(): string {
    return path.join(this.config.sharedDir, 'jobs');
  }

  /** A fresh job id and its private directory (uploads go to `<dir>/in`). */
  async allocate(): Promise<{ id: string; workDir: string; inDir: string }> {
    const id = newId();
    const workDir = path.join(this.jobsDir, id);
    const inDir = path.join(workDir, 'in');
    await mkdir(inDir, { recursive: true });
    return { id, workDir, inDir };
  }

  async submit(req: SubmitRequest): Promise<JobRow> {
    const row: JobRow = {
      id: req.id,
      owner_id: req.owner.id,
      tool: req.target.id,
      base_tool: baseToolId(req.target),
      kind: 'run',
      settings: JSON.stringify(redactSettings(req.settings)),
      status: 'queued',
      progress: 0,
      stage: 'queued',
      result: null,
      error: null,
      client_job_id: req.clientJobId ?? null,
      instance_id: this.instanceId,
      work_dir: req.workDir,
      output_path: null,
      output_name: null,
      content_type: null,
      original_size: null,
      processed_size: null,
      created_at: Date.now(),
      started_at: null,
      finished_at: null,
    };
    await insertJob(this.store.db, row);
    // A run any instance can do goes to the shared queue; one with a follow-up closure (saving to the
    // library) or a target built for this request (pipelines) runs here, its events still shared.
    if (this.shared && !req.afterSuccess && findTarget(req.target.id) === req.target) {
      const job: QueuedJob = {
        id: row.id,
        target: req.target.id,
        settings: req.settings,
        inputs: req.inputs,
        workDir: req.workDir,
        ownerId: req.owner.id,
      };
      await this.shared.enqueue(job).catch((e) => this.fail(row.id, req.workDir, e));
      return row;
    }
    const done = this.queue
      .run(row.id, (signal) => this.execute(req, signal))
      .catch((e) => this.fail(row.id, req.workDir, e))
      .then(() => getJob(this.store.db, row.id))
      .catch(() => undefined)
      .finally(() => this.settled.delete(row.id));
    this.settled.set(row.id, done);
    return row;
  }

  /** Scaled mode: a job from the shared queue, run by this instance's worker. */
  private async runQueued(job: QueuedJob, signal: AbortSignal): Promise<void> {
    const done = (async () => {
      const target = findTarget(job.target);
      if (!target) throw new KilnError('INTERNAL', `This instance has no tool ${job.target}; are the instances on different versions?`);
      await this.execute({ ...job, target }, signal);
    })()
      .catch((e) => this.fail(job.id, job.workDir, e))
      .then(() => getJob(this.store.db, job.id))
      .catch(() => undefined)
      .finally(() => this.settled.delete(job.id));
    this.settled.set(job.id, done);
    await done;
  }

  /** queued → running, unless the job was cancelled (or given up) meanwhile; the runner becomes its owner. */
  private async claim(id: string): Promise<boolean> {
    const r = await this.store.db
      .updateTable('jobs')
      .set({ status: 'running', started_at: Date.now(), stage: 'starting', instance_id: this.instanceId })
      .where('id', '=', id)
      .where('status', '=', 'queued')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  private async execute(req: RunSpec, signal: AbortSignal): Promise<void> {
    const db = this.store.db;
    if (!(await this.claim(req.id))) return;
    let lastWrite = 0;
    const outcome = await runTool(req.target.tool, req.inputs, req.settings, {
      workDir: req.workDir,
      dataDir: this.config.dataDir,
      signal,
      validated: true,
      allowPostScript: this.config.allowPostScript,
      onProgress: (percent, stage) => {
        this.events.publish(req.id, { type: 'progress', percent, stage });
        const now = Date.now();
        if (now - lastWrite >= PROGRESS_WRITE_MS || percent === 100) {
          lastWrite = now;
          updateJob(db, req.id, { progress: percent, stage: stage ?? null }).catch(() => {});
        }
      },
    });
    const patch: Partial<JobRow> & { status: 'completed' } = {
      status: 'completed',
      progress: 100,
      stage: 'done',
      result: JSON.stringify(outcome.data !== undefined ? { data: outcome.data } : {}),
      output_path: outcome.output?.path ?? null,
      output_name: outcome.output?.name ?? null,
      content_type: outcome.output?.contentType ?? null,
      original_size: outcome.originalSize,
      processed_size: outcome.processedSize,
      finished_at: Date.now(),
    };
    // The inputs are no longer needed; the output stays until the TTL sweep.
    await rm(path.join(req.workDir, 'in'), { recursive: true, force: true });
    // The follow-up (saving to the library) runs before the job is marked completed, so every view of
    // a completed job — the row, the 200 answer, the SSE event — already carries its fields.
    if (req.afterSuccess && !signal.aborted) {
      const current = await getJob(db, req.id);
      const extra = current
        ? await req.afterSuccess({ ...current, ...patch }).catch((e: unknown) => {
            // The run itself succeeded: keep its output and report the follow-up failure beside it.
            this.log.error({ err: e, jobId: req.id }, 'after-success step failed');
            return { afterSuccessError: toKilnError(e).toJSON().error };
          })
        : undefined;
      if (extra && Object.keys(extra).length) patch.result = JSON.stringify({ ...JSON.parse(patch.result ?? '{}'), extra });
    }
    if (!(await finishJob(db, req.id, patch))) {
      // Cancelled at the last moment: the output must not outlive the job.
      await rm(req.workDir, { recursive: true, force: true });
      return;
    }
    const row = await getJob(db, req.id);
    if (row) {
      this.events.publish(req.id, { type: 'completed', result: jobResult(row) });
      this.ended(row);
    }
  }

  /** Tells listeners (metrics) how a job ended, with its tool and how long it ran. */
  private ended(row: JobRow): void {
    if (this.finished.listenerCount('job') === 0) return;
    const ms = row.started_at && row.finished_at ? Number(row.finished_at) - Number(row.started_at) : undefined;
    this.finished.emit('job', { tool: row.tool, kind: row.kind, status: row.status, ms } satisfies FinishedJob);
  }

  async fail(id: string, workDir: string, e: unknown): Promise<void> {
    // A shutdown aborts runs too, but nobody cancelled them: they failed, as after a crash.
    // Shutting down after the grace period: the run is given up on purpose, and a client waiting for it
    // gets 503 (try again, elsewhere), not an internal error.
    const err = this.closing
      ? new KilnError('UNAVAILABLE', 'The daemon is shutting down and this job did not finish within the grace period; run it again.', {
          reason: 'daemon-shutdown',
        })
      : toKilnError(e);
    if (err.code === 'INTERNAL') this.log.error({ err: e, jobId: id }, 'job failed');
    await rm(workDir, { recursive: true, force: true }).catch(() => {});
    const body = err.toJSON().error;
    const ended = await finishJob(this.store.db, id, this.failure(err));
    // Someone else recorded the end already (a cancel from another instance, the reaper) and told the streams.
    if (ended) {
      this.events.publish(id, { type: 'failed', error: body });
      const row = await getJob(this.store.db, id).catch(() => undefined);
      if (row) this.ended(row);
    }
  }

  private failure(err: KilnError): Partial<JobRow> & { status: 'failed' | 'cancelled' } {
    return {
      status: err.code === 'CANCELLED' ? 'cancelled' : 'failed',
      error: JSON.stringify(err.toJSON().error),
      stage: err.code === 'CANCELLED' ? 'cancelled' : 'failed',
      output_path: null,
      output_name: null,
      finished_at: Date.now(),
    };
  }

  /** Resolves on the job's final event (from any instance); dispose() stops listening. */
  private finalEvent(id: string): { done: Promise<void>; dispose: () => void } {
    let dispose = () => {};
    const done = new Promise<void>((resolve) => {
      dispose = this.events.subscribe(id, ({ event }) => {
        if (event.type !== 'progress') resolve();
      });
    });
    return { done, dispose };
  }

  /**
   * Tracks a run the caller drives itself (a batch): `done` settles when it has ended and recorded
   * its final state; cancel() aborts `controller`.
   */
  track(id: string, controller: AbortController, done: Promise<unknown>): void {
    this.external.set(id, controller);
    const settled = done
      .catch(() => undefined)
      .then(() => getJob(this.store.db, id))
      .catch(() => undefined)
      .finally(() => {
        this.settled.delete(id);
        this.external.delete(id);
      });
    this.settled.set(id, settled);
  }

  /** The finished row, or undefined when the job is still going after `ms`. */
  async wait(id: string, ms: number): Promise<JobRow | undefined> {
    const p = this.settled.get(id);
    if (!p && this.shared && ms > 0) return this.waitShared(id, ms);
    if (!p) {
      const row = await getJob(this.store.db, id);
      return row && isFinal(row.status) ? row : undefined;
    }
    if (ms <= 0) return undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), ms);
    });
    try {
      return await Promise.race([p, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Scaled mode: a job another instance runs ends when its final event arrives (or the row says so). */
  private async waitShared(id: string, ms: number): Promise<JobRow | undefined> {
    const final = this.finalEvent(id);
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const before = await getJob(this.store.db, id);
      if (!before || isFinal(before.status)) return before;
      await Promise.race([final.done, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
      const row = await getJob(this.store.db, id);
      return row && isFinal(row.status) ? row : undefined;
    } finally {
      clearTimeout(timer);
      final.dispose();
    }
  }

  /** Aborts a queued or running job; its partial output is removed. */
  async cancel(row: JobRow): Promise<JobRow> {
    if (isFinal(row.status))
      throw new KilnError('CONFLICT', `Job ${row.id} has already ${row.status === 'completed' ? 'completed' : 'ended'} (${row.status}).`);
    const waiting = this.settled.get(row.id);
    const ext = this.external.get(row.id);
    if (ext && waiting) {
      ext.abort();
      await waiting;
    } else if (this.queue.cancel(row.id) && waiting) {
      await waiting;
    } else if (this.shared) {
      await this.cancelShared(row);
    } else {
      // Not running here (e.g. left over from a crash before recovery): end the record.
      await this.fail(row.id, row.work_dir ?? path.join(this.jobsDir, row.id), new KilnError('CANCELLED', 'The run was cancelled.'));
    }
    return (await getJob(this.store.db, row.id)) ?? row;
  }

  /**
   * Scaled mode, a job this instance does not run: a queued one is ended here (the worker that would
   * take it finds it cancelled and skips it); a running one is aborted by its instance on the cancel
   * message, and ended here if that instance does not confirm in time (it died).
   */
  private async cancelShared(row: JobRow): Promise<void> {
    const shared = this.shared!;
    const final = this.finalEvent(row.id);
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const err = new KilnError('CANCELLED', 'The run was cancelled.');
      const queued = await this.store.db
        .updateTable('jobs')
        .set(this.failure(err))
        .where('id', '=', row.id)
        .where('status', '=', 'queued')
        .executeTakeFirst();
      if (Number(queued.numUpdatedRows) > 0) {
        this.events.publish(row.id, { type: 'failed', error: err.toJSON().error });
        await shared.remove(row.id).catch(() => false);
        // A run pinned to its instance waits in that instance's local queue: the message drops it there.
        await shared.publishCancel(row.id).catch(() => {});
        if (row.work_dir) await rm(row.work_dir, { recursive: true, force: true });
        return;
      }
      await shared.publishCancel(row.id);
      await Promise.race([final.done, new Promise((resolve) => (timer = setTimeout(resolve, CANCEL_CONFIRM_MS)))]);
      const now = await getJob(this.store.db, row.id);
      if (now && !isFinal(now.status)) await this.fail(row.id, row.work_dir ?? path.join(this.jobsDir, row.id), err);
    } finally {
      clearTimeout(timer);
      final.dispose();
    }
  }

  /**
   * Scaled mode: jobs whose instance stopped sending heartbeats can never finish: any instance that
   * notices records them as failed. A queued job is only given up when no queue holds it any more.
   */
  async reap(): Promise<number> {
    const shared = this.shared;
    if (!shared) return 0;
    const rows = await this.store.db
      .selectFrom('jobs')
      .selectAll()
      .where('status', 'in', ['queued', 'running'])
      .orderBy('created_at')
      .limit(1000)
      .execute();
    const alive = new Map<string, boolean>();
    const isAlive = async (instance: string) => {
      if (!alive.has(instance)) alive.set(instance, await shared.isAlive(instance));
      return alive.get(instance)!;
    };
    let n = 0;
    const seen = new Set<string>();
    for (const row of rows) {
      if (row.status === 'running' && (await isAlive(row.instance_id))) continue;
      if (
        row.status === 'queued' &&
        (Date.now() - Number(row.created_at) < ORPHAN_QUEUED_MS || (await isAlive(row.instance_id)) || (await shared.has(row.id)))
      )
        continue;
      seen.add(row.id);
      // Seen orphaned twice, a beat apart: an instance whose key lapsed while Redis was away beats again first.
      const since = this.suspects.get(row.id);
      if (since === undefined) this.suspects.set(row.id, Date.now());
      if (since === undefined || Date.now() - since < this.config.heartbeatMs) continue;
      await this.fail(
        row.id,
        row.work_dir ?? path.join(this.jobsDir, row.id),
        daemonStopped(`The daemon instance that was running this job stopped; run it again.`),
      );
      this.suspects.delete(row.id);
      n++;
    }
    for (const id of [...this.suspects.keys()]) if (!seen.has(id)) this.suspects.delete(id);
    return n;
  }

  /** After a restart: what this instance was running can never finish; say so and free its files. */
  async recover(): Promise<number> {
    // The shared directory may be a fresh volume; readiness checks its free space from the start.
    await mkdir(this.jobsDir, { recursive: true });
    if (this.shared) return this.reap();
    const rows = await unfinishedJobs(this.store.db, this.instanceId);
    for (const row of rows) {
      if (row.work_dir) await rm(row.work_dir, { recursive: true, force: true });
      await finishJob(this.store.db, row.id, {
        status: 'failed',
        error: JSON.stringify(
          new KilnError('INTERNAL', `The daemon stopped while this job was ${row.status}; run it again.`, {
            reason: 'daemon-restarted',
          }).toJSON().error,
        ),
        stage: 'failed',
        finished_at: Date.now(),
      });
    }
    return rows.length;
  }

  /** Removes finished jobs (records and files) older than JOB_TTL_HOURS, and expired sessions. */
  async sweep(now = Date.now()): Promise<number> {
    await deleteExpiredSessions(this.store.db);
    const before = now - this.config.jobTtlHours * 3_600_000;
    // Scaled mode: the files are on the shared volume, so any instance may remove any job's.
    const rows = this.shared
      ? await this.store.db.selectFrom('jobs').selectAll().where('finished_at', '<', before).limit(500).execute()
      : await expiredJobs(this.store.db, this.instanceId, before);
    for (const row of rows) {
      await rm(row.work_dir ?? path.join(this.jobsDir, row.id), { recursive: true, force: true });
      await deleteJob(this.store.db, row.id);
    }
    return rows.length;
  }

  startSweeper(onError: (e: unknown) => void): void {
    const every = Math.min(10 * 60_000, Math.max(10_000, (this.config.jobTtlHours * 3_600_000) / 4));
    this.sweeper = setInterval(() => this.sweep().catch(onError), every);
    this.sweeper.unref();
    if (this.shared) {
      this.reaper = setInterval(() => this.reap().catch(onError), this.config.heartbeatMs);
      this.reaper.unref();
    }
  }

  /** Jobs this instance is running or holding in its queue (what a drain waits for). */
  busy(): number {
    const st = this.queue.state();
    return st.running + st.queued + this.external.size;
  }

  /** Resolves once no job runs here, or after `ms` (whichever comes first); true when idle. */
  async idle(ms: number): Promise<boolean> {
    const end = Date.now() + ms;
    while (this.busy() > 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
    return this.busy() === 0;
  }

  async close(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    if (this.reaper) clearInterval(this.reaper);
    this.closing = true;
    for (const c of this.external.values()) c.abort();
    await this.queue.close();
    // Let aborted runs record their end before the database closes.
    await Promise.race([Promise.allSettled([...this.settled.values()]), new Promise((r) => setTimeout(r, 5000))]);
  }
}

/**
 * A stable id for this data dir, so restart recovery touches only this instance's jobs. In scaled
 * mode each process adds its own suffix: recovery goes by heartbeats there, and two processes that
 * were given the same DATA_DIR by mistake must still not pass for one.
 */
export async function instanceIdFor(dataDir: string, perProcess = false): Promise<string> {
  const file = path.join(dataDir, 'instance-id');
  let id = (await readFile(file, 'utf8').catch(() => '')).trim();
  if (!id) {
    id = newId();
    await mkdir(dataDir, { recursive: true });
    await writeFile(file, id + '\n');
  }
  return perProcess ? `${id}-${randomBytes(4).toString('hex')}` : id;
}
