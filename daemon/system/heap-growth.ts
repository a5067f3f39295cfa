/**
 * How far V8 lets the daemon's old generation grow past what the last full collection kept, before it
 * starts marking again.
 *
 * Under upload traffic V8 chose a limit about 1.5× the live heap (45 MB over 29 MB), which left less
 * room than the young generation holds (bin/kiln caps a semi-space at 8 MB): V8 then starts the next
 * incremental marking the moment one ends. With two uploads of a 7 MB photo at a time, the daemon ran
 * a full collection every 250 ms, and marking cost ~35 ms of CPU per request on V8's helper threads
 * and ~8 ms on the main thread, a quarter of the CPU of the resize itself (`--trace-gc
 * --trace-incremental-marking`: "Start (task): (size/limit/slack) v8: 29MB / 45MB / 16MB"). Twice the
 * live heap leaves ~30 MB of room: marking starts when it is used up, and the per-request cost fell back
 * to what it is on a fresh daemon. The heap an idle daemon keeps does not change (a full collection
 * runs once jobs pause: heap-trim.ts).
 *
 * A V8 flag, not allowed in NODE_OPTIONS, so it is set here at start-up (V8 reads it each time it sets
 * the limit). An operator's own `--heap-growing-percent` on node's command line wins.
 */
import { setFlagsFromString } from 'node:v8';

export const HEAP_GROWING_PERCENT = 100;

/** Sets the growth unless node was started with its own; true when it set it. */
export function steadyHeapGrowth(execArgv: readonly string[] = process.execArgv): boolean {
  if (execArgv.some((a) => /^--heap[-_]growing[-_]percent\b/.test(a))) return false;
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  return true;
}
