/**
 * The main-thread side of the model host: one worker per process, started on the first prediction,
 * referenced only while a prediction runs (an idle host never keeps the CLI alive) and stopped after
 * the idle time with nothing running, which frees every model. A cancelled prediction answers at
 * once; the worker stops the model at its next check (between tiles). A run stays open until the
 * worker says it is done, native work it left running included (a stopped whisper.cpp chunk runs to
 * its end): until then the worker stays referenced and is not stopped, because a worker torn down
 * under running native work aborts the whole process (the addon's completion callback throws
 * during the teardown).
 */
import { Worker } from 'node:worker_threads';
import { KilnError, type ErrorCode, ERROR_TABLE } from '../../core/errors.js';
import { sharedWith } from '../threads.js';
import type { FromWorker, RunInfo, ToWorker } from './protocol.js';

interface Pending {
  resolve(v: { output: unknown; info: RunInfo }): void;
  reject(e: Error): void;
  progress?: (fraction: number, stage?: string) => void;
}

/** Idle time after which models are freed: KILN_AI_IDLE_S (default 300 s). */
export function idleMs(env: NodeJS.ProcessEnv = process.env): number {
  const s = Number(env.KILN_AI_IDLE_S);
  return Number.isFinite(s) && s >= 0 ? s * 1000 : 300_000;
}

class ModelHost {
  private worker: Worker | undefined;
  private pending = new Map<number, Pending>();
  /** Runs the worker has not reported done, answered or cancelled ones included. */
  private open = new Set<number>();
  private drainWaiters: (() => void)[] = [];
  private statsWaiters = new Map<number, (loaded: string[]) => void>();
  private nextId = 1;
  private idleTimer: NodeJS.Timeout | undefined;

  private start(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(new URL('./worker.js', import.meta.url));
    w.postMessage({ type: 'settings', idleMs: idleMs(), sharedWith: sharedWith() } satisfies ToWorker);
    w.on('message', (m: FromWorker) => this.onMessage(m));
    // A worker retired after the idle time ran nothing of anyone's: its end fails no run (the next
    // run went to a new worker), so only the current worker's failure or exit reaches the runs.
    w.on('error', (e) => {
      if (this.worker === w) this.failAll(new KilnError('INTERNAL', `The AI worker failed: ${e.message}`));
    });
    w.on('exit', (code) => {
      if (this.worker !== w) return;
      this.worker = undefined;
      this.answerStats();
      this.failAll(new KilnError('INTERNAL', `The AI worker stopped (exit code ${code}).`));
    });
    w.unref();
    this.worker = w;
    return w;
  }

  /** A stats question asked of a worker that is stopping gets no answer from it: none is loaded now. */
  private answerStats(): void {
    for (const answer of this.statsWaiters.values()) answer([]);
    this.statsWaiters.clear();
  }

  /**
   * Stops the idle worker. It is let go at once, before its exit: a run that comes in while it is
   * stopping starts a new worker instead of being posted to one that ends under it (such a run failed
   * INTERNAL, "The AI worker stopped", whenever it came within the few ms of a teardown).
   */
  private retire(): void {
    const w = this.worker;
    if (!w) return;
    this.worker = undefined;
    this.answerStats();
    void w.terminate();
  }

  private failAll(e: KilnError): void {
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
    this.open.clear();
    this.settle();
  }

  private onMessage(m: FromWorker): void {
    if (m.type === 'stats') {
      this.statsWaiters.get(m.id)?.(m.loaded);
      this.statsWaiters.delete(m.id);
      return;
    }
    if (m.type === 'done') {
      this.open.delete(m.id);
      return this.settle();
    }
    const p = this.pending.get(m.id);
    if (!p) return;
    if (m.type === 'progress') return p.progress?.(m.fraction, m.stage);
    this.pending.delete(m.id);
    if (m.type === 'result') p.resolve({ output: m.output, info: m.info });
    else {
      const code = m.error.code && m.error.code in ERROR_TABLE ? (m.error.code as ErrorCode) : 'INTERNAL';
      p.reject(new KilnError(code, m.error.message, { reason: m.error.reason, details: m.error.details }));
    }
    this.settle();
  }

  /** After each answer: unreference the worker when nothing runs, and stop it after the idle time. */
  private settle(): void {
    if (!this.idle()) return;
    for (const w of this.drainWaiters.splice(0)) w();
    // A run's end can come while a stats question is on its way, which needs the worker referenced.
    if (!this.statsWaiters.size) this.worker?.unref();
    clearTimeout(this.idleTimer);
    const ms = idleMs();
    this.idleTimer = setTimeout(() => {
      if (this.idle()) this.retire();
    }, ms);
    this.idleTimer.unref();
  }

  private idle(): boolean {
    return !this.pending.size && !this.open.size;
  }

  run(
    model: string,
    dataDir: string,
    input: unknown,
    opts: { signal?: AbortSignal; progress?: Pending['progress']; transfer?: ArrayBuffer[] },
  ) {
    opts.signal?.throwIfAborted();
    const w = this.start();
    clearTimeout(this.idleTimer);
    w.ref();
    const id = this.nextId++;
    this.open.add(id);
    return new Promise<{ output: unknown; info: RunInfo }>((resolve, reject) => {
      const onAbort = () => {
        if (!this.pending.delete(id)) return;
        w.postMessage({ type: 'cancel', id } satisfies ToWorker);
        reject(new KilnError('CANCELLED', 'The run was cancelled.'));
        this.settle();
      };
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      const done = () => opts.signal?.removeEventListener('abort', onAbort);
      this.pending.set(id, {
        resolve: (v) => {
          done();
          resolve(v);
        },
        reject: (e) => {
          done();
          reject(e);
        },
        progress: opts.progress,
      });
      w.postMessage({ type: 'run', id, model, dataDir, input } satisfies ToWorker, opts.transfer ?? []);
    });
  }

  /** Ids of the models loaded now (tests, bench, doctor). */
  async loaded(): Promise<string[]> {
    const w = this.worker;
    if (!w) return [];
    const id = this.nextId++;
    // Referenced while the answer is on its way, or an idle process would exit before it arrives.
    w.ref();
    return new Promise<string[]>((resolve) => {
      this.statsWaiters.set(id, resolve);
      w.postMessage({ type: 'stats', id } satisfies ToWorker);
    }).finally(() => {
      if (this.idle()) w.unref();
    });
  }

  /** Stops the worker, after its open runs end (at most `waitMs`: past that it is stopped anyway). */
  async stop(waitMs = 60_000): Promise<void> {
    clearTimeout(this.idleTimer);
    if (this.worker && !this.idle()) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.drainWaiters.push(resolve);
        timer = setTimeout(resolve, waitMs);
      });
      clearTimeout(timer);
    }
    await this.worker?.terminate();
  }
}

export const modelHost = new ModelHost();
