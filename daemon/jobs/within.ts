/** Waiting on a job for a bounded time (the synchronous window, `Prefer: wait=N`). */

/** `p`'s value, or undefined when `ms` pass first; the timer never outlives the race. */
export async function within<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const timeout = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), ms);
    });
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
