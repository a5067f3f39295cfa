/**
 * The main-thread side of the model host: one worker per process, started on the first prediction,
 * referenced only while a prediction runs (an idle host never keeps the CLI alive) and stopped after
 * the idle time with nothing running, which frees every model. A cancelled prediction answers at
 * once; the worker stops the model at its next check (between tiles).
 */
import { Worker } from 'node:worker_threads';
import { KilnError, type ErrorCode, ERROR_TABLE } from '../../core/errors.js';
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
  private statsWaiters = new Map<number, (loaded: string[]) => void>();
  private nextId = 1;
  private idleTimer: NodeJS.Timeout | undefined;

  private start(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(new URL('./worker.js', import.meta.url));
    w.postMessage({ type: 'idle', ms: idleMs() } satisfies ToWorker);
    w.on('message', (m: FromWorker) => this.onMessage(m));
    w.on('error', (e) => this.failAll(new KilnError('INTERNAL', `The AI worker failed: ${e.message}`)));
    w.on('exit', (code) => {
      if (this.worker === w) this.worker = undefined;
      // A stats question asked while the worker was stopping gets no answer from it: none is loaded now.
      for (const answer of this.statsWaiters.values()) answer([]);
      this.statsWaiters.clear();
      this.failAll(new KilnError('INTERNAL', `The AI worker stopped (exit code ${code}).`));
    });
    w.unref();
    this.worker = w;
    return w;
  }

  private failAll(e: KilnError): void {
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
    this.settle();
  }

  private onMessage(m: FromWorker): void {
    if (m.type === 'stats') {
      this.statsWaiters.get(m.id)?.(m.loaded);
      this.statsWaiters.delete(m.id);
      return;
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
    if (this.pending.size) return;
    this.worker?.unref();
    clearTimeout(this.idleTimer);
    const ms = idleMs();
    this.idleTimer = setTimeout(() => {
      if (!this.pending.size) void this.worker?.terminate();
    }, ms);
    this.idleTimer.unref();
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
      if (!this.pending.size) w.unref();
    });
  }

  async stop(): Promise<void> {
    clearTimeout(this.idleTimer);
    await this.worker?.terminate();
  }
}

export const modelHost = new ModelHost();
