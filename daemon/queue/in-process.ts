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
  private closed = false;

  constructor(private readonly concurrency: number) {}

  run<T>(jobId: string, task: (signal: AbortSignal) => Promise<T>): Promise<T> {
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
      this.waiting.push({ jobId, start, reject });
      this.next();
    });
  }

  private next(): void {
    while (this.running.size < this.concurrency && this.waiting.length) this.waiting.shift()!.start();
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
    return { kind: 'in-process', concurrency: this.concurrency, running: this.running.size, queued: this.waiting.length };
  }

  async ping(): Promise<void> {
    if (this.closed) throw new KilnError('UNAVAILABLE', 'The queue is closed.');
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const w of this.waiting.splice(0)) w.reject(new KilnError('CANCELLED', 'The daemon is shutting down.'));
    for (const ac of this.running.values()) ac.abort();
  }
}
