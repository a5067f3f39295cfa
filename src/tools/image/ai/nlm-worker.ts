/**
 * Runs non-local means (denoise-common.ts) in a worker thread, so a large image does not hold the
 * daemon's event loop for seconds. The pixels are moved in and out, not copied, where node lets them go
 * (canMove: sharp's own output buffers it keeps, and copies).
 */
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { KilnError } from '../../../core/errors.js';
import { canMove } from '../../../core/transfer.js';
import { type NlmOptions, nonLocalMeans } from './denoise-common.js';

interface Job {
  px: Uint8Array;
  width: number;
  height: number;
  channels: number;
  opts: Omit<NlmOptions, 'signal' | 'progress'>;
}

if (!isMainThread && parentPort && (workerData as { nlm?: boolean })?.nlm) {
  const job = (workerData as { job: Job }).job;
  nonLocalMeans(job.px, job.width, job.height, job.channels, { ...job.opts, progress: (f) => parentPort!.postMessage({ progress: f }) });
  parentPort.postMessage({ done: job.px }, [job.px.buffer as ArrayBuffer]);
}

/** Non-local means off the event loop; `px` is moved to the worker and the filtered pixels come back. */
export function nonLocalMeansOffThread(
  job: Job,
  o: { signal?: AbortSignal; progress?: (fraction: number) => void } = {},
): Promise<Uint8Array> {
  o.signal?.throwIfAborted();
  return new Promise((resolve, reject) => {
    const w = new Worker(new URL(import.meta.url), {
      workerData: { nlm: true, job },
      transferList: [job.px.buffer].filter(canMove),
    });
    const onAbort = () => {
      void w.terminate();
      reject(new KilnError('CANCELLED', 'The run was cancelled.'));
    };
    o.signal?.addEventListener('abort', onAbort, { once: true });
    w.on('message', (m: { progress?: number; done?: Uint8Array }) => {
      if (m.progress !== undefined) o.progress?.(m.progress);
      if (m.done) {
        o.signal?.removeEventListener('abort', onAbort);
        resolve(m.done);
        void w.terminate();
      }
    });
    w.on('error', (e) => {
      o.signal?.removeEventListener('abort', onAbort);
      reject(new KilnError('INTERNAL', `non-local means failed: ${e.message}`));
    });
  });
}
