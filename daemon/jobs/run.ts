/**
 * One run of a job on this instance: claim it (queued → running), run the tool with progress
 * published and written now and then, run the follow-up, and record the end.
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { KilnError, toKilnError } from '../../src/core/errors.js';
import type { ToolInputs } from '../../src/core/tool.js';
import { runTool } from '../../src/tools/run-tool.js';
import type { DaemonConfig } from '../config.js';
import type { Store } from '../store/db.js';
import { claimJob, finishJobRow, getJob, updateJob, type JobRow } from '../store/jobs.js';
import type { JobEvents } from './events.js';
import { jobResult } from './records.js';
import type { ScratchPool } from './scratch.js';
import type { Target } from './targets.js';

const PROGRESS_WRITE_MS = 500;

/** What a run needs, wherever it runs. */
export interface RunSpec {
  id: string;
  target: Target;
  /** Validated settings. */
  settings: Record<string, unknown>;
  inputs: ToolInputs;
  workDir: string;
  /** Runs after a successful run (e.g. saving to the file library); its fields join the result. */
  afterSuccess?: (row: JobRow) => Promise<Record<string, unknown> | void>;
  /** S3 mode: uploads the output; what the record keeps as output_path (daemon/storage/job-files.ts). */
  storeOutput?: (file: string, name: string, contentType?: string) => Promise<string>;
  /** The job was recorded running (its queue slot reserved before): there is no claim to make. */
  claimed?: boolean;
}

export interface RunDeps {
  db: Store['db'];
  config: Pick<DaemonConfig, 'dataDir' | 'allowPostScript'>;
  events: JobEvents;
  log: FastifyBaseLogger;
  instanceId: string;
  /**
   * Told the moment the completed row is recorded, before anything else is awaited: a client that
   * reads the job completed finds it counted (metrics) too.
   */
  ended?: (row: JobRow) => void;
  /** Working directories for runs of jobs that have none (uploads held in memory). */
  scratch?: ScratchPool;
}

/** queued → running, unless the job was cancelled (or given up) meanwhile; the runner becomes its owner. */
export function claim(deps: RunDeps, id: string): Promise<boolean> {
  return claimJob(deps.db, id, deps.instanceId);
}

/** Runs the job; the completed row, or undefined when it was not run (cancelled before, or at the last moment). */
export async function executeRun(deps: RunDeps, req: RunSpec, signal: AbortSignal): Promise<JobRow | undefined> {
  const db = deps.db;
  if (!req.claimed && !(await claim(deps, req.id))) return undefined;
  // The claim recorded 0 % 'starting': the first write is due PROGRESS_WRITE_MS later. A short run
  // writes no progress at all, its final record says 100 % (SSE subscribers get every step meanwhile).
  let lastWrite = Date.now();
  // 100 % is written ahead of the final record only when a follow-up step comes between them.
  const followUp = !!(req.afterSuccess || req.storeOutput);
  // Progress writes go one after the other and are awaited before the final record: on a pool of
  // connections (PostgreSQL) a late progress write would otherwise land after it (a completed job at 0 %).
  let progressWrites: Promise<unknown> = Promise.resolve();
  const files = [...req.inputs.files, ...Object.values(req.inputs.extra).flat()];
  // Uploads held in memory left the job without a directory (JobService.allocate): the run works in a
  // kept scratch directory and its output becomes the job's file at workDir (scratch.ts says why).
  const scratch =
    deps.scratch && !req.storeOutput && req.inputs.files.length > 0 && files.every((f) => f.bytes)
      ? await deps.scratch.acquire()
      : undefined;
  const outcome = await runTool(req.target.tool, req.inputs, req.settings, {
    workDir: scratch?.dir ?? req.workDir,
    ...(scratch ? { outDir: scratch.outDir, outputTo: req.workDir } : {}),
    dataDir: deps.config.dataDir,
    signal,
    validated: true,
    allowPostScript: deps.config.allowPostScript,
    onProgress: (percent, stage) => {
      deps.events.publish(req.id, { type: 'progress', percent, stage });
      const now = Date.now();
      if (percent === 100 ? followUp : now - lastWrite >= PROGRESS_WRITE_MS) {
        lastWrite = now;
        progressWrites = progressWrites.then(() => updateJob(db, req.id, { progress: percent, stage: stage ?? null }).catch(() => {}));
      }
    },
  }).finally(() => scratch && deps.scratch!.release(scratch));
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
  await progressWrites;
  // The last moment a cancel stops the run. Past it the follow-ups run to their end whatever comes: a
  // save skipped or an output left unstored (S3) made a completed job without them, its download a 404.
  if (signal.aborted) throw new KilnError('CANCELLED', 'The run was cancelled.');
  // The inputs are no longer needed (the output stays until the TTL sweep); they go while the rest
  // is recorded, and are gone before the run counts as settled.
  // Inputs still held in memory never made `in` (JobService.allocate): nothing to remove there, and rm
  // of a missing directory costs two lstat calls on the thread pool all the same.
  const onDisk = files.some((f) => !f.bytes);
  const inputsGone = onDisk ? rm(path.join(req.workDir, 'in'), { recursive: true, force: true }) : Promise.resolve();
  inputsGone.catch(() => {}); // awaited below; this only keeps an early throw from leaving it unhandled
  // The follow-up (saving to the library) runs before the job is marked completed, so every view of
  // a completed job — the row, the 200 answer, the SSE event — already carries its fields.
  if (req.afterSuccess) {
    const current = await getJob(db, req.id);
    const extra = current
      ? await req.afterSuccess({ ...current, ...patch }).catch((e: unknown) => {
          // The run itself succeeded: keep its output and report the follow-up failure beside it.
          deps.log.error({ err: e, jobId: req.id }, 'after-success step failed');
          return { afterSuccessError: toKilnError(e).toJSON().error };
        })
      : undefined;
    if (extra && Object.keys(extra).length) patch.result = JSON.stringify({ ...JSON.parse(patch.result ?? '{}'), extra });
  }
  if (req.storeOutput && patch.output_path && patch.output_name)
    patch.output_path = await req.storeOutput(patch.output_path, patch.output_name, patch.content_type ?? undefined);
  const row = await finishJobRow(db, req.id, patch);
  if (row) deps.ended?.(row);
  await inputsGone;
  if (!row) {
    // Cancelled at the last moment: the output must not outlive the job.
    await rm(req.workDir, { recursive: true, force: true });
    return undefined;
  }
  deps.events.publish(req.id, { type: 'completed', result: jobResult(row) });
  return row;
}
