/** How many ffmpeg processes run at once, and how many threads each one uses. */
import os from 'node:os';
import { KilnError } from '../../core/errors.js';

/** Threads per ffmpeg process: all cores; concurrency is bounded by the media slots below instead. */
export const FFMPEG_THREADS = Math.max(1, os.availableParallelism?.() ?? os.cpus().length);

/**
 * One shared limit for concurrent ffmpeg processes (KILN_MEDIA_CONCURRENCY, default: one per two
 * cores), since each already uses every core; more at once only adds memory and context switches.
 */
const MEDIA_SLOTS = Math.max(1, Number(process.env.KILN_MEDIA_CONCURRENCY) || Math.floor(FFMPEG_THREADS / 2) || 1);
let busy = 0;
const waiting: (() => void)[] = [];

/** Waits for a free media slot (or the abort); returns the function that frees it again. */
export async function acquireSlot(signal?: AbortSignal): Promise<() => void> {
  if (busy >= MEDIA_SLOTS) {
    await new Promise<void>((resolve, reject) => {
      const go = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        const i = waiting.indexOf(go);
        if (i >= 0) waiting.splice(i, 1);
        reject(new KilnError('CANCELLED', 'The run was cancelled.'));
      };
      waiting.push(go);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  } else busy++;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const next = waiting.shift();
    if (next) next();
    else busy--;
  };
}
