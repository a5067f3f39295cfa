/**
 * Garbage collections the daemon asks for itself, at moments it knows more than V8 does. V8 gives
 * memory back (freed ArrayBuffers, a grown heap) only when a collection runs.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type Gc = (o?: { type: 'minor' | 'major' }) => void;
let gcFn: Gc | undefined;

function gc(): Gc {
  if (!gcFn) {
    setFlagsFromString('--expose-gc');
    gcFn = runInNewContext('gc') as Gc;
  }
  return gcFn;
}

/**
 * A full collection and then a young one, for moments the daemon is idle: its memory reducer may not
 * run on an idle daemon for a minute or more, and a collection costs tens of milliseconds of the event
 * loop, so only idle time pays it. The full one compacts the old generation; the young one after it
 * finds the young generation empty and may shrink it (V8 11.3 resizes it after a scavenge only when
 * the recent allocation rate reads low).
 */
export async function fullGc(): Promise<void> {
  // Without options: node 20's V8 runs gc({type: 'major'}) as a young collection.
  gc()();
  gc()({ type: 'minor' });
}

/** Upload bytes between two young collections: one after each upload of this size or more. */
const UPLOAD_BYTES_PER_SCAVENGE = 4 * 1048576;
let uploadedSince = 0;

/**
 * Called with each request body's size once it has been read. Node reads a body into a fresh ~64 KB
 * buffer per socket read, which V8 counts as external memory; the buffers die as soon as their bytes
 * are copied into the job's arena or file. Left to V8, a daemon taking 10 MB photos on two connections
 * ran a full collection every ~6 uploads (43 in 250; `--trace-gc`: incremental marking started by a
 * task with the old generation at half its limit), and RSS under that load sat at ~190 MB. A young
 * collection right after each upload of 4 MB or more (1–2 ms of the event loop; little is alive in the
 * young generation then) left 3 full collections in 250 uploads and RSS at ~165 MB, with throughput
 * and CPU per request the same within the run-to-run noise (interleaved, three runs each). Spacing
 * them at 32 MB did not do it: the full collections stayed as many (39–44 per 250).
 */
export function afterUpload(bytes: number): void {
  uploadedSince += bytes;
  if (uploadedSince < UPLOAD_BYTES_PER_SCAVENGE) return;
  uploadedSince = 0;
  gc()({ type: 'minor' });
}
