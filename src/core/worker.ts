/** Runs one job in a worker thread: cancelled with the run's signal, errors turned into KilnErrors. */
import { Worker } from 'node:worker_threads';
import { KilnError } from './errors.js';

export function runWorker<T>(url: URL, data: unknown, signal: AbortSignal, what: string, onProgress?: (p: number) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new KilnError('CANCELLED', 'The run was cancelled.'));
    const worker = new Worker(url, { workerData: data });
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      fn();
    };
    const onAbort = () => {
      void worker.terminate();
      finish(() => reject(new KilnError('CANCELLED', 'The run was cancelled.')));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    worker.on('message', (m: { progress?: number }) => {
      if (m.progress !== undefined && Object.keys(m).length === 1) onProgress?.(m.progress);
      else finish(() => resolve(m as T));
    });
    worker.on('error', (e) => finish(() => reject(new KilnError('INTERNAL', `${what} failed: ${e.message}`))));
    worker.on('exit', (code) => finish(() => reject(new KilnError('INTERNAL', `The ${what} worker stopped (exit ${code}).`))));
  });
}
