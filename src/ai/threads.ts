/**
 * How many threads one model run uses (onnxruntime's intra-op threads, whisper.cpp's threads), and
 * whether onnxruntime's idle threads spin.
 *
 * Every core, in the CLI and in the daemon: the host's worker runs one ONNX inference at a time
 * (onnxruntime-node runs a session on the calling thread), so two AI jobs take turns and never double
 * the threads. What differs is spinning. The CLI has nothing else to do and lets the idle threads
 * spin-wait between operators (onnxruntime's default, ~2 % faster alone). The daemon, told at start
 * (shareCores) that it runs up to JOB_CONCURRENCY jobs beside its HTTP event loop, makes them sleep:
 * measured on 2 cores with a warm remove-background pair and small resizes sent meanwhile, ~4 % less
 * CPU and resizes answered in 21–27 ms instead of 27–31 ms at the median, at the same AI time. Giving a
 * model only cores ÷ JOB_CONCURRENCY threads was measured too and not taken: resizes got faster still
 * (16–22 ms) but a lone AI request took 2.9 s instead of 2.0–2.2 s. KILN_AI_THREADS, when set, is the
 * thread count in both.
 *
 * The model host's worker has its own copy of this module: the host hands it what shareCores was told
 * when it starts the worker (host/host.ts), so the daemon sets it before the first model runs.
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
  return { threads: Math.max(1, cores), spin };
}
