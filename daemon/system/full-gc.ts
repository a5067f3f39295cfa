/**
 * One full garbage collection, for moments the daemon is idle. V8 frees an ArrayBuffer's memory only
 * when a collection finds it unreachable, and its memory reducer may not run on an idle daemon for a
 * minute or more; a collection costs tens of milliseconds of the event loop, so only idle time pays it.
 */
export async function fullGc(): Promise<void> {
  const [{ setFlagsFromString }, { runInNewContext }] = await Promise.all([import('node:v8'), import('node:vm')]);
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}
