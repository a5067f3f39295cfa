/**
 * Gives the C heap's free pages back to the system once the daemon is quiet (glibc's malloc_trim).
 *
 * glibc returns freed memory to the system only from the top of an arena (or whole mmapped blocks);
 * the free holes that image decoding leaves between live blocks (libvips' small tile buffers, HTTP
 * parsing, sharp's bookkeeping) stay resident. Measured on the bench's mixed image requests
 * (`node dist/bench/run.js --quick`): the daemon went from ~90 MB idle to ~150–170 MB and stayed
 * there; malloc_trim(0) in a quiet moment took it back to ~120 MB within a second (its madvise
 * reaches the free pages inside every arena, not only the top). jemalloc instead (LD_PRELOAD) gave
 * similar memory with its decay timers but cost 11 % more CPU per resize, and returning pages at
 * once (dirty_decay_ms:0) halved the throughput.
 *
 * malloc_trim is called through core/libc.ts, loaded on the first quiet moment after a job, never on a
 * daemon that runs none; elsewhere than glibc (musl, macOS) there is none and this does nothing.
 */
import { libc } from '../../src/core/libc.js';

type Trim = (pad: number) => number;

/** undefined: not tried yet; null: not available on this system. */
let trimFn: Trim | null | undefined;

function loadTrim(): Trim | null {
  try {
    return (libc()?.func('int malloc_trim(size_t)') as Trim | undefined) ?? null;
  } catch {
    return null;
  }
}

/** Hands the C heap's free pages back; true when something was released. */
export function trimNativeHeap(): boolean {
  if (trimFn === undefined) trimFn = loadTrim();
  return trimFn ? trimFn(0) === 1 : false;
}

/**
 * Trims once nothing has run for `quietMs`: `poke()` on every job end; the trim waits until `busy()`
 * reads 0 for a whole quiet period, so it never holds an arena lock under a running decode.
 */
export class QuietTrim {
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly quietMs: number,
    private readonly busy: () => number,
    private readonly trim: () => unknown = trimNativeHeap,
  ) {}

  poke(): void {
    if (!(this.quietMs > 0)) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      if (this.busy() > 0) this.poke();
      else
        void Promise.resolve()
          .then(this.trim)
          .catch(() => {});
    }, this.quietMs);
    this.timer.unref();
  }

  close(): void {
    clearTimeout(this.timer);
  }
}
