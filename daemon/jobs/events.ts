/** Progress fan-out: runners publish, SSE streams subscribe. In-process; a Redis bus keeps this shape. */
import { EventEmitter } from 'node:events';

export type JobEvent =
  | { type: 'progress'; percent: number; stage?: string }
  | { type: 'completed'; result: Record<string, unknown> }
  | { type: 'failed'; error: Record<string, unknown> };

export interface JobEventWithId {
  id: number;
  event: JobEvent;
}

export class JobEvents {
  private emitter = new EventEmitter();
  private seq = new Map<string, number>();

  constructor() {
    this.emitter.setMaxListeners(0);
  }

  publish(jobId: string, event: JobEvent): void {
    const id = (this.seq.get(jobId) ?? 0) + 1;
    if (event.type === 'progress') this.seq.set(jobId, id);
    else this.seq.delete(jobId);
    this.emitter.emit(jobId, { id, event } satisfies JobEventWithId);
  }

  /** The id the next event will carry. */
  nextId(jobId: string): number {
    return (this.seq.get(jobId) ?? 0) + 1;
  }

  subscribe(jobId: string, fn: (e: JobEventWithId) => void): () => void {
    this.emitter.on(jobId, fn);
    return () => this.emitter.off(jobId, fn);
  }
}
