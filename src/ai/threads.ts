/**
 * How many threads one model run uses (onnxruntime's intra-op threads, whisper.cpp's threads), and
 * whether onnxruntime's idle threads spin.
 *
 * The CLI runs one job at a time: a model gets every core, and onnxruntime's threads spin-wait
 * between operators, the fastest way for a process with nothing else to do. The daemon runs up to
 * JOB_CONCURRENCY jobs at once beside its HTTP event loop and tells this module so at start
 * (shareCores): a model gets its share of the cores, and its idle threads sleep instead of spinning,
 * so the jobs beside it and the event loop get the cores a spinning thread would burn. The host's
 * worker runs one ONNX inference at a time (onnxruntime-node runs a session on the calling thread), so
 * the share is what one model run leaves the other jobs, not a split between models.
 * KILN_AI_THREADS, when set, is the thread count in both.
 *
 * The model host's worker has its own copy of this module: the host hands it the share when it
 * starts the worker (host/host.ts), so the share must be set before the first model runs.
 */
import { availableParallelism } from 'node:os';

export interface AiThreads {
  /** Threads of one model run. */
  threads: number;
  /** onnxruntime's intra-op threads spin-wait for work (its default) rather than sleep. */
  spin: boolean;
}

/** Jobs the daemon may run at once; undefined in the CLI, which runs one. */
let daemonJobs: number | undefined;

/** The daemon, at start: up to `jobs` jobs run at once in this process. */
export function shareCores(jobs: number | undefined): void {
  daemonJobs = jobs === undefined ? undefined : Math.max(1, Math.floor(jobs) || 1);
}

/** What shareCores was told (the host hands it to its worker). */
export function sharedWith(): number | undefined {
  return daemonJobs;
}

export function aiThreads(
  env: NodeJS.ProcessEnv = process.env,
  jobs: number | undefined = daemonJobs,
  cores: number = availableParallelism(),
): AiThreads {
  const spin = jobs === undefined;
  const n = Number(env.KILN_AI_THREADS);
  if (Number.isInteger(n) && n > 0) return { threads: n, spin };
  return { threads: Math.max(1, jobs === undefined ? cores : Math.floor(cores / jobs)), spin };
}
