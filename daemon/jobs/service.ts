/**
 * Jobs: every HTTP run is persisted, queued, run (run.ts) and its progress published. Routes wait on
 * `wait()` for the synchronous window; SSE follows `events`. Records and their views are in
 * records.ts, route answers in answer.ts, scaled-mode cancel and reaper in scaled.ts, recovery and
 * the sweep in upkeep.ts.
 */
import { mkdir, rm } from 'node:fs/promises';
import { EventEmitter } from 'node:events';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { KilnError, toKilnError } from '../../src/core/errors.js';
import type { AuthUser } from '../auth/authenticate.js';
import { newId } from '../auth/secrets.js';
import { getSettings } from '../accounts/settings.js';
import type { DaemonConfig } from '../config.js';
import { isDistributed, type DistributedQueue, type JobQueue, type QueuedJob, type WorkerOutcome } from '../queue/queue.js';
import { LocalStorage } from '../storage/local.js';
import type { ObjectStorage } from '../storage/storage.js';
import { copyOutput, fetchInputs, removeJobObjects, removeStoredInputs, storeInputs, storesJobFiles } from '../storage/job-files.js';
import type { Store } from '../store/db.js';
import { finishJobRow, getJob, insertJob, isFinal, type JobRow } from '../store/jobs.js';
import { JobEvents } from './events.js';
import { executeBatch } from './batch-job.js';
import { type LibrarySaver, outputStep, saveStep } from './steps.js';
import { pipelineTarget } from './pipeline-target.js';
import { failureRecord, newJobRow } from './records.js';
import { ScratchPool } from './scratch.js';
import { executeRun, type RunDeps, type RunSpec } from './run.js';
import { cancelElsewhere, handBack, LostJobs, Reaper, type ScaledDeps } from './scaled.js';
import { findTarget } from './targets.js';
import { recoverLocal, removeStaleScratch, sweepJobs, Upkeep } from './upkeep.js';
import { waitForJob } from './within.js';

/** How often the sweeper looks whether a sweep is due. */
const SWEEP_TICK_MS = 5000;

export interface SubmitRequest extends RunSpec {
  owner: AuthUser;
  clientJobId?: string;
  /** A file library item the output is saved to as a new version (through setLibrarySaver). */
  saveToFile?: string;
  /** A pipeline run: its definition, so a worker on any instance can rebuild the target. */
  pipeline?: { raw: unknown; name?: string };
  /** Scaled mode: a batch (every input run on its own, the outputs in one ZIP; batch-job.ts). */
  batch?: boolean;
  /** Frees what the inputs held (their memory reservation) once the run has settled. */
  release?: () => void;
}

export type { LibrarySaver };

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
  /** Periodic passes, each on one instance of a scaled deployment (upkeep.ts). */
  readonly upkeep: Upkeep;
  private lastSweep = 0;
  private closing = false;
  /** Set in scaled mode: the shared queue, event bus and heartbeats. */
  private readonly shared?: DistributedQueue;
  private readonly scaled?: { deps: ScaledDeps; reaper: Reaper; lost: LostJobs };
  /** Scaled mode: jobs recorded but not yet in the shared queue (inputs being stored, the enqueue in flight). */
  private readonly enqueueing = new Set<string>();
  private readonly runDeps: RunDeps;
  private librarySaver?: LibrarySaver;
  /** Working directories of runs whose uploads are held in memory (run.ts). */
  private readonly scratch: ScratchPool;

  constructor(
    private readonly store: Store,
    readonly queue: JobQueue,
    private readonly config: DaemonConfig,
    readonly instanceId: string,
    private readonly log: FastifyBaseLogger,
    /** Job inputs and outputs go through it when it is object storage (daemon/storage/job-files.ts). */
    readonly storage: ObjectStorage = new LocalStorage(config.sharedDir),
  ) {
    this.shared = isDistributed(queue) ? queue : undefined;
    this.scratch = new ScratchPool(path.join(config.dataDir, 'run-scratch'));
    const shared = this.shared;
    this.events = shared
      ? new JobEvents({ publish: (m) => shared.publishEvent(m), onMessage: (fn) => shared.onEvent(fn) })
      : new JobEvents();
    const ended = (row: JobRow) => this.ended(row);
    this.runDeps = { db: store.db, config, events: this.events, log, instanceId, ended, scratch: this.scratch };
    this.upkeep = new Upkeep(
      (name, ttlMs) => queue.lead?.(name, ttlMs) ?? Promise.resolve(true),
      (err, name) => log.error({ err, pass: name }, 'periodic pass failed'),
    );
    if (shared) {
      const deps: ScaledDeps = {
        db: store.db,
        shared,
        events: this.events,
        jobsDir: this.jobsDir,
        fail: (id, dir, e) => this.fail(id, dir, e),
        removeObjects: (id) => removeJobObjects(this.storage, id).then(() => {}),
      };
      const heldHere = (id: string) => this.enqueueing.has(id) || this.settled.has(id) || this.external.has(id);
      this.scaled = {
        deps,
        reaper: new Reaper(deps, config.heartbeatMs),
        lost: new LostJobs(deps, instanceId, config.heartbeatMs, heldHere),
      };
      // A cancel sent to another instance reaches batches driven here.
      shared.onCancel((id) => this.external.get(id)?.abort());
      shared.process((job, signal) => this.runQueued(job, signal));
    }
  }

  /** The file library registers how outputs are saved to its items (saveToFile). */
  setLibrarySaver(fn: LibrarySaver): void {
    this.librarySaver = fn;
  }

  /** Copies a finished job's output (a file, or an object in S3 mode) to a local file. */
  copyOutput(row: JobRow, file: string): Promise<void> {
    if (!row.output_path) throw new KilnError('NOT_FOUND', `Job ${row.id} has no output.`);
    return copyOutput(this.storage, row.output_path, file);
  }

  /** Scaled mode: jobs run on any instance, events come over the shared bus. */
  get distributed(): boolean {
    return this.shared !== undefined;
  }

  /** Job inputs and outputs: under SHARED_DIR, which every instance of a scaled deployment mounts. */
  get jobsDir(): string {
    return path.join(this.config.sharedDir, 'jobs');
  }

  /**
   * A fresh job id and its private directory (uploads go to `<dir>/in`). `inDir: false` when the uploads
   * stay in memory: no directory is made then, and the run's output becomes the file at the job's path
   * (`<jobs>/<id>`, run.ts with ScratchPool), so a small request creates no directory at all (ext4 made
   * each one costly here, see scratch.ts). Whatever writes a file under the path later creates it as a
   * directory (an input written out for an engine that reads files; the output then goes to its `out/`).
   * One mkdir per level (a recursive one of a path without its parent tries the leaf twice).
   */
  async allocate(opts: { inDir?: boolean } = {}): Promise<{ id: string; workDir: string; inDir: string }> {
    const id = newId();
    const workDir = path.join(this.jobsDir, id);
    const inDir = path.join(workDir, 'in');
    if (opts.inDir === false) return { id, workDir, inDir };
    // The jobs directory exists from start-up (recover); made again should it have gone since.
    await mkdir(workDir).catch((e: NodeJS.ErrnoException) =>
      e.code === 'ENOENT' ? mkdir(workDir, { recursive: true }) : Promise.reject(e),
    );
    await mkdir(inDir);
    return { id, workDir, inDir };
  }

  async submit(req: SubmitRequest): Promise<JobRow> {
    const viewer = { id: req.owner.id, role: req.owner.role };
    // Before the record exists: without a library there is nothing to save to.
    const afterSave = req.afterSuccess ?? saveStep(this.librarySaver, viewer, req.saveToFile);
    const row = newJobRow(req, this.instanceId);
    // A run any instance can do goes to the shared queue: catalog tools and presets, pipelines (rebuilt
    // from their definition), saves to the library (done by the worker). One with a follow-up closure or a
    // target built only for this request runs here, its events still shared.
    const toShared = this.shared && !req.afterSuccess && (req.pipeline || findTarget(req.target.id) === req.target);
    // Until the queue holds it, the check for lost jobs (LostJobs) leaves it alone.
    if (toShared) this.enqueueing.add(row.id);
    // A run that starts at once here is recorded running from the start: no claim to write after.
    const claimed = !toShared && this.queue.reserve?.(row.id) === true;
    if (claimed) Object.assign(row, { status: 'running', stage: 'starting', started_at: row.created_at } satisfies Partial<JobRow>);
    await insertJob(this.store.db, row).catch((e) => {
      this.enqueueing.delete(row.id);
      if (claimed) this.queue.unreserve?.(row.id);
      throw e;
    });
    if (toShared) {
      const job: QueuedJob = {
        id: row.id,
        target: req.target.id,
        settings: req.settings,
        inputs: req.inputs,
        workDir: req.workDir,
        ownerId: req.owner.id,
        ...(req.saveToFile ? { saveToFile: { fileId: req.saveToFile, viewer } } : {}),
        ...(req.pipeline ? { pipeline: req.pipeline } : {}),
        ...(req.batch ? { batch: true } : {}),
      };
      await (async () => {
        if (storesJobFiles(this.storage)) {
          job.inputs = await storeInputs(this.storage, row.id, req.inputs);
          job.stored = true;
          // The inputs live in the bucket now; the worker fetches them wherever it runs.
          await rm(req.workDir, { recursive: true, force: true });
        }
        await this.shared!.enqueue(job);
      })()
        .catch((e) => this.fail(row.id, req.workDir, e))
        .finally(() => this.enqueueing.delete(row.id));
      return row;
    }
    const spec: RunSpec = {
      ...req,
      afterSuccess: afterSave,
      storeOutput: outputStep(this.storage, row.id),
      claimed,
    };
    const done = this.queue
      .run(row.id, (signal) => this.execute(spec, signal))
      .catch((e) => this.fail(row.id, req.workDir, e))
      // With object storage the output is in the bucket: nothing of the run stays on this disk.
      .then(async (ended) => {
        if (spec.storeOutput) await rm(req.workDir, { recursive: true, force: true });
        // The run recorded its end and returned that row: no second read (only a run that never
        // started, or was cancelled at the last moment, leaves the reading to here).
        return ended ?? getJob(this.store.db, row.id);
      })
      .catch(() => undefined)
      .finally(() => {
        this.settled.delete(row.id);
        req.release?.();
      });
    this.settled.set(row.id, done);
    return row;
  }

  /** Scaled mode: a job from the shared queue, run by this instance's worker. */
  private async runQueued(job: QueuedJob, signal: AbortSignal): Promise<WorkerOutcome> {
    // Stored inputs (S3 mode) are fetched into this instance's own scratch directory.
    const workDir = job.stored ? path.join(this.jobsDir, job.id) : job.workDir;
    let handedBack = false;
    const done = (async () => {
      const target = job.pipeline ? pipelineTarget(job.pipeline.raw, job.pipeline.name).target : findTarget(job.target);
      if (!target) throw new KilnError('INTERNAL', `This instance has no tool ${job.target}; are the instances on different versions?`);
      const inputs = job.stored ? await fetchInputs(this.storage, job.inputs, path.join(workDir, 'in')) : job.inputs;
      const spec: RunSpec = {
        id: job.id,
        target,
        settings: job.settings,
        inputs,
        workDir,
        afterSuccess: job.saveToFile && saveStep(this.librarySaver, job.saveToFile.viewer, job.saveToFile.fileId),
        storeOutput: outputStep(this.storage, job.id),
      };
      if (job.batch) {
        const row = await executeBatch({ ...this.runDeps, queue: this.queue }, spec, signal);
        if (row) this.ended(row);
      } else await this.execute(spec, signal);
    })()
      .catch(async (e) => {
        // Stopping with the job unfinished: another instance runs it again from its inputs.
        if (this.closing && signal.aborted && (await handBack(this.scaled!.deps, job.id, this.instanceId))) handedBack = true;
        else await this.fail(job.id, workDir, e);
      })
      .finally(async () => {
        if (!job.stored) return;
        await rm(workDir, { recursive: true, force: true });
        if (!handedBack) await removeStoredInputs(this.storage, job.id).catch(() => {});
      })
      .then(() => getJob(this.store.db, job.id))
      .catch(() => undefined)
      .finally(() => this.settled.delete(job.id));
    this.settled.set(job.id, done);
    await done;
    return handedBack ? 'hand-back' : undefined;
  }

  /** The run's final row, or undefined when it did not run to its end here. */
  private async execute(req: RunSpec, signal: AbortSignal): Promise<JobRow | undefined> {
    // (executeRun tells listeners through runDeps.ended as soon as the row is recorded.)
    return executeRun(this.runDeps, req, signal);
  }

  /**
   * Tells listeners (metrics, the heap trim) how a job ended, with its tool and how long it ran. Runs
   * from the queue and failures come here by themselves; a run driven outside the queue (a batch answered
   * as it streams) calls it once its completed row is recorded.
   */
  ended(row: JobRow): void {
    if (this.finished.listenerCount('job') === 0) return;
    const ms = row.started_at && row.finished_at ? Number(row.finished_at) - Number(row.started_at) : undefined;
    this.finished.emit('job', { tool: row.tool, kind: row.kind, status: row.status, ms } satisfies FinishedJob);
  }

  /** Records the failure (unless the job has ended already); the job's row as it is then. */
  async fail(id: string, workDir: string, e: unknown): Promise<JobRow | undefined> {
    // A shutdown aborts runs too, but nobody cancelled them: they failed, as after a crash.
    // Shutting down after the grace period: the run is given up on purpose, and a client waiting for it
    // gets 503 (try again, elsewhere), not an internal error.
    const err = this.closing
      ? new KilnError('UNAVAILABLE', 'The daemon is shutting down and this job did not finish within the grace period; run it again.', {
          reason: 'daemon-shutdown',
        })
      : toKilnError(e);
    if (err.code === 'INTERNAL') this.log.error({ err: e, jobId: id }, 'job failed');
    const body = err.toJSON().error;
    // A job that completed meanwhile keeps its output: a cancel that read the row while the job ran and
    // came here once the run was over removed the output of a job recorded as completed.
    const current = await getJob(this.store.db, id).catch(() => undefined);
    if (current?.status === 'completed') return current;
    // The files go before the failure is recorded: a client that reads it (a progress stream opened late
    // answers from the row) must find nothing of the run left.
    await rm(workDir, { recursive: true, force: true }).catch(() => {});
    const ended = await finishJobRow(this.store.db, id, failureRecord(err));
    const row = ended ?? (await getJob(this.store.db, id).catch(() => undefined));
    // Stored inputs and partial outputs (S3) go with the failure.
    if (row?.status !== 'completed') await removeJobObjects(this.storage, id).catch(() => {});
    // Someone else recorded the end already (a cancel from another instance, the reaper) and told the streams.
    if (ended) {
      this.events.publish(id, { type: 'failed', error: body });
      this.ended(ended);
    }
    return row;
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

  /** The finished row, or undefined when the job is still going after `ms` (within.ts). */
  wait(id: string, ms: number): Promise<JobRow | undefined> {
    return waitForJob({ db: this.store.db, events: this.events, settled: this.settled.get(id), scaled: !!this.shared }, id, ms);
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
      await cancelElsewhere(this.scaled!.deps, row);
    } else {
      // Not running here (e.g. left over from a crash before recovery): end the record.
      await this.fail(row.id, row.work_dir ?? path.join(this.jobsDir, row.id), new KilnError('CANCELLED', 'The run was cancelled.'));
    }
    return (await getJob(this.store.db, row.id)) ?? row;
  }

  /** Removes what a job kept: its directory and, with object storage, its inputs and output in the bucket. */
  async removeFiles(row: JobRow): Promise<void> {
    await rm(row.work_dir ?? path.join(this.jobsDir, row.id), { recursive: true, force: true });
    await removeJobObjects(this.storage, row.id);
  }

  /** Scaled mode: see Reaper. */
  async reap(): Promise<number> {
    return this.scaled ? this.scaled.reaper.reap() : 0;
  }

  /** After a restart: what this instance was running can never finish; say so and free its files. */
  async recover(): Promise<number> {
    // The shared directory may be a fresh volume; readiness checks its free space from the start.
    await mkdir(this.jobsDir, { recursive: true });
    await this.scratch.reset();
    if (!this.shared) return recoverLocal(this.store.db, this.instanceId);
    // With object storage the jobs directory is this data dir's scratch: what a killed process left there.
    const shared = this.shared;
    if (storesJobFiles(this.storage))
      await removeStaleScratch(this.store.db, this.jobsDir, (id) => shared.isAlive(id), this.config.requestTimeoutS * 1000);
    return this.reap();
  }

  /**
   * Removes outputs older than outputTtlHours and job records older than jobRecordTtlHours (live
   * settings, environment defaults), and expired sessions.
   */
  async sweep(now = Date.now()): Promise<number> {
    const s = await getSettings(this.store.db, this.config);
    return sweepJobs(this.store.db, {
      outputsBefore: now - s.outputTtlHours * 3_600_000,
      recordsBefore: now - s.jobRecordTtlHours * 3_600_000,
      instanceId: this.instanceId,
      jobsDir: this.jobsDir,
      scaled: !!this.shared,
      storage: this.storage,
    });
  }

  /** Sweeps when sweepIntervalS (a live setting) has passed since the last sweep; null when not due. */
  async sweepIfDue(now = Date.now()): Promise<number | null> {
    const { sweepIntervalS } = await getSettings(this.store.db, this.config);
    if (now - this.lastSweep < sweepIntervalS * 1000) return null;
    this.lastSweep = now;
    return this.sweep(now);
  }

  startSweeper(onError: (e: unknown) => void): void {
    // A short tick that sweeps when due: a changed interval applies from the next tick, no restart.
    this.upkeep.every('job-sweep', SWEEP_TICK_MS, () => this.sweepIfDue().catch(onError));
    if (this.shared) this.upkeep.every('reaper', this.config.heartbeatMs, () => this.reap().catch(onError));
    // Every instance checks its own queued jobs (no lease): only it knows which it still holds itself.
    if (this.scaled) this.upkeep.everyInstance('lost-jobs', this.config.heartbeatMs, () => this.scaled!.lost.check().catch(onError));
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
    this.upkeep.close();
    this.closing = true;
    for (const c of this.external.values()) c.abort();
    await this.queue.close();
    // Let aborted runs record their end before the database closes.
    // (unref: once they have, a pending timer would hold the process for the rest of the 5 s.)
    await Promise.race([Promise.allSettled([...this.settled.values()]), new Promise((r) => setTimeout(r, 5000).unref())]);
    await this.scratch.close();
  }
}
