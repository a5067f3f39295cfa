/**
 * Small uploads held in memory instead of the job's directory, for tools that read their input through
 * openInput (InputSpec.inMemory). On these machines receiving a 7 MB photo, writing it out and reading
 * it back cost a third of the CPU of resizing it; held in memory, the daemon's throughput nears sharp's
 * own. Only where jobs run in this process: a scaled deployment's jobs may run on another instance.
 *
 * A request body goes into an arena: one buffer at least as large as its declared Content-Length, into
 * which the file parts are copied as they arrive. Arenas are reused, because fresh memory is what costs
 * here: touching 10 MB of new pages took 20–40 ms of CPU, copying into pages already mapped about 1 ms.
 * Bounded: MEMORY_INPUTS_MB of arenas, leased and free together, jobs waiting in the queue included. A
 * body that does not fit, or whose size is not declared up front, streams to disk as before. A free
 * arena unused for KEEP_MS is dropped (under steady traffic arenas come back within milliseconds), and
 * after IDLE_MS without uploads the rest go and one full collection gives their memory back (V8 frees
 * a dropped arena only when a collection finds it).
 */
import { fullGc } from '../system/gc.js';

const KB = 1024;
const MB = 1024 * KB;
const KEEP_MS = 1_000;
/** Free arenas kept at most: a few more than the uploads in flight at once on a small machine. */
const KEEP_FREE = 4;
const IDLE_MS = 30_000;

interface FreeArena {
  arena: Buffer;
  /** When it was given back. */
  since: number;
}

export interface MemoryLease {
  /** Room for the whole request body; file parts are copied into it one after the other. */
  arena: Buffer;
  /** Gives the arena back (idempotent); nothing may read the parts' bytes after this. */
  release(): void;
}

/**
 * Arena sizes: powers of two from 256 KB below 1 MB, whole MBs above, so that similar bodies share
 * arenas. Never below glibc's mmap threshold (bin/kiln sets 128 KB): a small arena kept from the main
 * heap would pin the memory above it, which glibc then cannot give back.
 */
function sizeClass(bytes: number): number {
  if (bytes >= MB) return Math.ceil(bytes / MB) * MB;
  let size = 256 * KB;
  while (size < bytes) size *= 2;
  return size;
}

export class MemoryInputs {
  /** Arenas not leased now, kept for the next bodies. */
  private free: FreeArena[] = [];
  /** Arenas were dropped since the last full collection. */
  private dropped = false;
  private leasedBytes = 0;
  private freeBytes = 0;
  private idleTimer?: NodeJS.Timeout;

  constructor(
    private readonly limitBytes: number,
    private readonly times = { keepMs: KEEP_MS, idleMs: IDLE_MS },
  ) {}

  /** An arena for a body of `bytes`, or undefined when there is no room for it. */
  reserve(bytes: number): MemoryLease | undefined {
    if (!Number.isSafeInteger(bytes) || bytes <= 0) return undefined;
    this.prune(Date.now() - this.times.keepMs);
    const arena = this.reuse(bytes) ?? this.allocate(sizeClass(bytes));
    if (!arena) return undefined;
    this.leasedBytes += arena.length;
    let held = true;
    return {
      arena,
      release: () => {
        if (!held) return;
        held = false;
        this.leasedBytes -= arena.length;
        this.free.push({ arena, since: Date.now() });
        this.freeBytes += arena.length;
        if (this.free.length > KEEP_FREE) this.drop(this.free.shift()!);
        this.dropWhenIdle();
      },
    };
  }

  /**
   * Drops every free arena now, for the daemon's quiet moment after its jobs (system/heap-trim.ts),
   * whose full collection then frees them: the idle timer has nothing left to collect.
   */
  dropFree(): void {
    this.prune(Number.POSITIVE_INFINITY);
    this.dropped = false;
  }

  /** Bytes of arenas leased now and kept free (for tests and metrics). */
  get usage(): { leased: number; free: number } {
    return { leased: this.leasedBytes, free: this.freeBytes };
  }

  /** The smallest free arena that holds `bytes`. */
  private reuse(bytes: number): Buffer | undefined {
    let best = -1;
    for (let i = 0; i < this.free.length; i++) {
      const size = this.free[i]!.arena.length;
      if (size >= bytes && (best < 0 || size < this.free[best]!.arena.length)) best = i;
    }
    if (best < 0) return undefined;
    const [{ arena }] = this.free.splice(best, 1) as [FreeArena];
    this.freeBytes -= arena.length;
    return arena;
  }

  /** A new arena, dropping free ones (too small for this body) to make room under the limit. */
  private allocate(size: number): Buffer | undefined {
    if (this.leasedBytes + size > this.limitBytes) return undefined;
    while (this.leasedBytes + this.freeBytes + size > this.limitBytes) this.drop(this.free.shift()!);
    return Buffer.allocUnsafeSlow(size);
  }

  /** Drops the free arenas given back before `before`. */
  private prune(before: number): void {
    for (const f of this.free.filter((x) => x.since < before)) this.drop(f);
    this.free = this.free.filter((x) => x.since >= before);
  }

  private drop(f: FreeArena): void {
    this.freeBytes -= f.arena.length;
    this.dropped = true;
  }

  private dropWhenIdle(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      this.prune(Number.POSITIVE_INFINITY);
      if (!this.dropped || this.leasedBytes > 0) return;
      this.dropped = false;
      fullGc().catch(() => {});
    }, this.times.idleMs);
    this.idleTimer.unref();
  }
}
