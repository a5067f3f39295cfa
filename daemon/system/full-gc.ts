/**
 * A full garbage collection and then a young one, for moments the daemon is idle. V8 gives memory back
 * (freed ArrayBuffers, a grown heap) only when a collection runs, and its memory reducer may not run on
 * an idle daemon for a minute or more; a collection costs tens of milliseconds of the event loop, so
 * only idle time pays it. The full one compacts the old generation; the young one after it finds the
 * young generation empty and may shrink it (V8 11.3 resizes it after a scavenge only when the recent
 * allocation rate reads low).
 */
export async function fullGc(): Promise<void> {
  const [{ setFlagsFromString }, { runInNewContext }] = await Promise.all([import('node:v8'), import('node:vm')]);
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as (o?: { type: 'minor' }) => void;
  // Without options: node 20's V8 runs gc({type: 'major'}) as a young collection.
  gc();
  gc({ type: 'minor' });
}
