/** In-process queue: at most `concurrency` tasks at once, FIFO, each with its own AbortController. */
import { KilnError } from '../../src/core/errors.js';
import type { JobQueue, QueueState } from './queue.js';

interface Waiting {
  jobId: string;
  start: () => void;
  reject: (e: unknown) => void;
}

export class InProcessQueue implements JobQueue {
  private waiting: Waiting[] = [];
  private running = new Map<string, AbortController>();
  /** Slots taken by reserve() whose run() has not come yet. */
  private reserved = new Set<string>();
  private closed = false;

  constructor(private readonly concurrency: number) {}

  run<T>(jobId: string, task: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const reserved = this.reserved.delete(jobId);
    if (this.closed) return Promise.reject(new KilnError('UNAVAILABLE', 'The daemon is shutting down.'));
    return new Promise<T>((resolve, reject) => {
      const start = () => {
        const ac = new AbortController();
        this.running.set(jobId, ac);
        task(ac.signal)
          .then(resolve, reject)
          .finally(() => {
            this.running.delete(jobId);
            this.next();
          });
      };
      // A reserved slot was kept free for this run: it starts now, ahead of anything queued since.
      if (reserved) start();
      else {
        this.waiting.push({ jobId, start, reject });
        this.next();
      }
    });
  }

  reserve(jobId: string): boolean {
    if (this.closed || this.waiting.length || this.busySlots() >= this.concurrency) return false;
    this.reserved.add(jobId);
    return true;
  }

  unreserve(jobId: string): void {
    if (this.reserved.delete(jobId)) this.next();
  }

  private busySlots(): number {
    return this.running.size + this.reserved.size;
  }

  private next(): void {
    while (this.busySlots() < this.concurrency && this.waiting.length) this.waiting.shift()!.start();
  }

  cancel(jobId: string): boolean {
    const i = this.waiting.findIndex((w) => w.jobId === jobId);
    if (i >= 0) {
      const [w] = this.waiting.splice(i, 1);
      w!.reject(new KilnError('CANCELLED', 'The run was cancelled.'));
      return true;
    }
    const ac = this.running.get(jobId);
    if (ac) {
      ac.abort();
      return true;
    }
    return false;
  }

  state(): QueueState {
    return { kind: 'in-process', concurrency: this.concurrency, running: this.busySlots(), queued: this.waiting.length };
  }

  async ping(): Promise<void> {
    if (this.closed) throw new KilnError('UNAVAILABLE', 'The queue is closed.');
  }

  async close(): Promise<void> {
    this.closed = true;
    this.reserved.clear();
    for (const w of this.waiting.splice(0)) w.reject(new KilnError('CANCELLED', 'The daemon is shutting down.'));
    for (const ac of this.running.values()) ac.abort();
  }
}
