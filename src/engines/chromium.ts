/**
 * One warm headless Chromium (Debian's /usr/bin/chromium driven by playwright-core), shared by
 * html-to-pdf, markdown-to-pdf, epub-convert and html-to-image. The browser and playwright-core live
 * in a worker thread (chromium/worker.ts) that ends with the browser: playwright-core costs ~28 MB of
 * heap (~80 MB resident) once imported, and a daemon that printed one PDF kept all of it for good.
 *
 * Work is sent as page tasks: a named export of a module, which the worker imports and calls with a
 * fresh page of a fresh browser context (no cookies, cache or storage shared between jobs), plus the
 * task's arguments (structured-cloneable, as is its result) and an `io` to report progress and events.
 * htmlToPdf (chromium/pdf-page.ts) is one; a tool with its own page logic keeps it in a module of its own.
 *
 * Keeping it warm: by default the browser (and its thread) stop once idle for KILN_CHROMIUM_IDLE_MS (1 s),
 * so a CLI batch reuses it from one file to the next; the daemon calls keepChromiumWarm() with its engine
 * idle time. Neither the idle browser nor its timer holds the process: a one-shot CLI closes the browser
 * as soon as nothing else is left to do (beforeExit) and exits, where it waited out the idle time (1.1 s of
 * a 3.5 s `kiln markdown-to-pdf`). Closing is what removes the browser's temporary profile.
 */
import { readFile, readdir, realpath } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import type { BrowserContextOptions } from 'playwright-core';
import { type ErrorCode, KilnError } from '../core/errors.js';
import type { FromWorker, TaskRef, ToWorker } from './chromium/protocol.js';
import { engineStopped } from './idle-stop.js';
import { requireEngine } from './registry.js';

export { DOC_ORIGIN } from './chromium/pdf-page.js';

/** What a page task gets besides its page, context and arguments (in the worker). */
export interface PageTaskIo {
  /** Aborted when the job is cancelled (the context is closed as well). */
  signal: AbortSignal;
  progress(percent: number, stage?: string): void;
  /** An event for the caller's `onEvent` (e.g. `blocked` with a URL). */
  emit(name: string, data: unknown): void;
}

export interface PageJob {
  signal?: AbortSignal;
  timeoutMs?: number;
  progress?(percent: number, stage?: string): void;
  onEvent?(name: string, data: unknown): void;
}

interface Pending {
  resolve(v: unknown): void;
  reject(e: unknown): void;
  job: PageJob;
}

let worker: Worker | undefined;
let closing: Promise<void> | undefined;
let nextId = 1;
const pending = new Map<number, Pending>();
let idleMs = Number(process.env.KILN_CHROMIUM_IDLE_MS) || 1000;
/**
 * Whether the worker opens the next job's context and page in advance (worker.ts): for a browser kept
 * warm between jobs (keepChromiumWarm, the daemon), not for a one-shot CLI run whose browser stops 1 s
 * after its job.
 */
let spares = false;
let idleTimer: NodeJS.Timeout | undefined;

function startWorker(): Worker {
  const w = new Worker(new URL('./chromium/worker.js', import.meta.url));
  w.on('message', (m: FromWorker) => {
    if (m.type === 'closed') return;
    const p = pending.get(m.id);
    if (!p) return;
    if (m.type === 'event') {
      if (m.name === 'progress') {
        const d = m.data as { percent: number; stage?: string };
        p.job.progress?.(d.percent, d.stage);
      } else p.job.onEvent?.(m.name, m.data);
      return;
    }
    pending.delete(m.id);
    if (m.type === 'done') p.resolve(m.value);
    else
      p.reject(
        new KilnError((m.error.code ?? 'INTERNAL') as ErrorCode, m.error.message, { details: m.error.details, reason: m.error.reason }),
      );
    if (pending.size === 0) {
      w.unref();
      armIdleStop();
    }
  });
  const lost = (why: string) => {
    if (worker !== w) return;
    worker = undefined;
    for (const [id, p] of pending) {
      pending.delete(id);
      p.reject(new KilnError('INTERNAL', `Chromium failed: ${why}`));
    }
  };
  w.on('error', (e) => lost(e.message));
  w.on('exit', (code) => lost(`its thread ended (${code})`));
  // Held by the process only while a task runs or the browser closes (withPage, shutdownChromium); after
  // the listeners, since a 'message' listener refs the worker again.
  w.unref();
  return w;
}

function armIdleStop(ms = idleMs): void {
  if (idleTimer) clearTimeout(idleTimer);
  // (setTimeout takes at most 2^31-1 ms: anything longer is as good as never.)
  if (Number.isFinite(ms) && ms <= 2 ** 31 - 1)
    idleTimer = setTimeout(() => void shutdownChromium().then(() => engineStopped('chromium')), ms).unref();
}

/** How long a browser started ahead of its task waits for it (the first step may take a while). */
const PREPARED_WAIT_MS = 60_000;

// Nothing else left to do in this process (a CLI run has ended): close the browser now rather than after
// its idle time. Closing holds the process until it is done; then the process exits.
process.on('beforeExit', () => {
  if (worker) void shutdownChromium().then(() => engineStopped('chromium'));
});

/**
 * Starts the browser for a page task the caller will send once its own first step is done (pandoc's
 * HTML): the worker's start, playwright-core's import and Chromium's launch (~1 s cold) overlap that
 * step. Without a task the browser stops as an idle one does.
 */
export function prepareChromium(): void {
  const start = async () => {
    const exe = await requireEngine('chromium');
    // A stop under way is waited for by withPage, as a browser already there is used by it.
    if (worker || closing) return;
    worker = startWorker();
    worker.postMessage({ type: 'launch', exe } satisfies ToWorker);
    armIdleStop(Math.max(idleMs, PREPARED_WAIT_MS));
  };
  // A missing engine or a launch that fails is the task's to report.
  start().catch(() => undefined);
}

/**
 * Keeps the browser running for `ms` after its last job (the daemon passes KILN_ENGINE_IDLE_S), or
 * until shutdownChromium() when Infinity.
 */
export function keepChromiumWarm(ms = Infinity): void {
  idleMs = ms;
  spares = true;
  if (idleTimer) clearTimeout(idleTimer);
}

/** Closes the browser and ends its thread (running tasks fail). Safe to call more than once. */
export function shutdownChromium(): Promise<void> {
  if (idleTimer) clearTimeout(idleTimer);
  const w = worker;
  if (!w) return closing ?? Promise.resolve();
  worker = undefined;
  w.ref();
  const done = new Promise<void>((resolve) => {
    const t = setTimeout(resolve, 10_000);
    w.on('message', (m: FromWorker) => {
      if (m.type !== 'closed') return;
      clearTimeout(t);
      resolve();
    });
    w.once('exit', () => {
      clearTimeout(t);
      resolve();
    });
  });
  w.postMessage({ type: 'close' } satisfies ToWorker);
  // Forgotten once done, so a later prepareChromium() starts a browser again.
  const closed: Promise<void> = done
    .then(() => w.terminate())
    .then(
      () => undefined,
      () => undefined,
    )
    .then(() => {
      if (closing === closed) closing = undefined;
    });
  closing = closed;
  for (const [id, p] of pending) {
    pending.delete(id);
    p.reject(new KilnError('CANCELLED', 'Chromium was shut down.'));
  }
  return closing;
}

/**
 * The browser's process id (tests kill it to check the relaunch): our direct child process running
 * the Chromium binary (the worker thread spawns it in this process). Linux only.
 */
export async function chromiumPid(): Promise<number | undefined> {
  if (!worker) return undefined;
  for (const d of await readdir('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const st = await readFile(`/proc/${d}/stat`, 'utf8').catch(() => '');
    // Fields after the parenthesised command: state, ppid, …
    const m = /\) (\S+) (\d+)/.exec(st);
    if (m && m[1] !== 'Z' && Number(m[2]) === process.pid && /chrom/i.test(st.slice(st.indexOf('('), st.lastIndexOf(')'))))
      return Number(d);
  }
  return undefined;
}

/**
 * Runs a page task in the Chromium worker with a fresh context (`options`) and page; the context is
 * always closed afterwards, and the job's time-out and cancel signal close it early.
 */
export async function withPage<T>(options: BrowserContextOptions, task: TaskRef, job: PageJob = {}): Promise<T> {
  if (job.signal?.aborted) throw new KilnError('CANCELLED', 'The run was cancelled.');
  const exe = await requireEngine('chromium');
  // A stop still under way ends the old thread first (its browser is closing).
  if (closing && !worker) await closing;
  if (idleTimer) clearTimeout(idleTimer);
  worker ??= startWorker();
  const w = worker;
  w.ref();
  const id = nextId++;
  const onAbort = () => w.postMessage({ type: 'abort', id } satisfies ToWorker);
  // (Finding the engine took a moment: the job may have been cancelled meanwhile.)
  if (job.signal?.aborted) throw new KilnError('CANCELLED', 'The run was cancelled.');
  job.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    return (await new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject, job });
      w.postMessage({
        type: 'run',
        id,
        exe,
        options,
        task,
        timeoutMs: job.timeoutMs ?? 60_000,
        spare: spares,
      } satisfies ToWorker);
    })) as T;
  } finally {
    job.signal?.removeEventListener('abort', onAbort);
  }
}

export interface PdfOptions {
  /** Directory whose files the document may use (images of an EPUB…); nothing outside it is served. */
  baseDir?: string;
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Called for every request that was blocked (tests, logs). */
  onBlocked?: (url: string) => void;
}

/**
 * Prints an HTML document to PDF with every network request blocked (chromium/pdf-page.ts). The
 * document is served from DOC_ORIGIN; relative references resolve to files under baseDir.
 */
export async function htmlToPdf(html: string | Buffer, outPath: string, o: PdfOptions = {}): Promise<void> {
  const baseDir = o.baseDir ? await realpath(o.baseDir) : undefined;
  await withPage(
    { offline: false, javaScriptEnabled: true, bypassCSP: false },
    { module: new URL('./chromium/pdf-page.js', import.meta.url).href, name: 'printPdf', args: { html, outPath, baseDir } },
    {
      signal: o.signal,
      timeoutMs: o.timeoutMs,
      onEvent: (name, data) => {
        if (name === 'blocked') o.onBlocked?.(data as string);
      },
    },
  );
}
