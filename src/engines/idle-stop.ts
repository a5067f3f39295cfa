/**
 * Who is told when a warm engine (LibreOffice, Chromium) has stopped after its idle time: the daemon
 * trims its heap then (daemon/system/heap-trim.ts). Chromium's thread and the pool's bookkeeping leave
 * their freed pages in the C heap, where they stay resident until a trim: the bench read the daemon at
 * ~120–150 MB after its engines had stopped against ~86 MB before their first use.
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
