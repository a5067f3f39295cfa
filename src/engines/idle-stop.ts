/**
 * Who is told when a warm engine (LibreOffice, Chromium) has stopped after its idle time: the daemon
 * trims its heap then (daemon/system/heap-trim.ts), as after jobs, since Chromium's thread and the
 * pool's bookkeeping leave freed pages in the C heap. A small gain, measured in the bench's engine rows
 * (`node dist/bench/run.js --quick`): 114 MB at the stop, 110 MB a few seconds later.
 */
type Listener = (engine: 'office' | 'chromium') => void;

const listeners = new Set<Listener>();

/** Calls `fn` after every idle stop; returns the unsubscribe. */
export function onEngineStopped(fn: Listener): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

export function engineStopped(engine: 'office' | 'chromium'): void {
  for (const fn of listeners) fn(engine);
}
