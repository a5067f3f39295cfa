/**
 * Progress fan-out: runners publish, SSE streams subscribe. In process by default; in scaled mode
 * every event goes through the shared bus (Redis pub/sub) and comes back to every instance, this one
 * included, so a stream on any instance sees the runs of all of them.
 */
import { EventEmitter } from 'node:events';

export type JobEvent =
  | { type: 'progress'; percent: number; stage?: string }
  | { type: 'completed'; result: Record<string, unknown> }
  | { type: 'failed'; error: Record<string, unknown> };

export interface JobEventWithId {
  id: number;
  event: JobEvent;
}

/** The shared bus of scaled mode. */
export interface EventTransport {
  publish(message: string): Promise<void>;
  onMessage(fn: (message: string) => void): void;
}

export class JobEvents {
  private emitter = new EventEmitter();
  private seq = new Map<string, number>();

  constructor(private readonly transport?: EventTransport) {
    this.emitter.setMaxListeners(0);
    transport?.onMessage((message) => {
      let m: { jobId: string; id: number; event: JobEvent };
      try {
        m = JSON.parse(message);
      } catch {
        return;
      }
      this.deliver(m.jobId, m.id, m.event);
    });
  }

  publish(jobId: string, event: JobEvent): void {
    const id = this.nextId(jobId);
    if (!this.transport) return this.deliver(jobId, id, event);
    if (event.type === 'progress') this.seq.set(jobId, id);
    // The database keeps the state: a lost event costs a live update, not the outcome.
    this.transport.publish(JSON.stringify({ jobId, id, event })).catch(() => {});
  }

  private deliver(jobId: string, id: number, event: JobEvent): void {
    if (event.type === 'progress') this.seq.set(jobId, Math.max(id, this.seq.get(jobId) ?? 0));
    else this.seq.delete(jobId);
    this.emitter.emit(jobId, { id, event } satisfies JobEventWithId);
  }

  /** The id the next event will carry. */
  nextId(jobId: string): number {
    return this.lastId(jobId) + 1;
  }

  /** The id of the last progress event seen for a running job (0 when none, or once it has ended). */
  lastId(jobId: string): number {
    return this.seq.get(jobId) ?? 0;
  }

  subscribe(jobId: string, fn: (e: JobEventWithId) => void): () => void {
    this.emitter.on(jobId, fn);
    return () => this.emitter.off(jobId, fn);
  }

  /** Resolves on the job's final event (from any instance); dispose() stops listening. */
  finalEvent(jobId: string): { done: Promise<void>; dispose: () => void } {
    let dispose = () => {};
    const done = new Promise<void>((resolve) => {
      dispose = this.subscribe(jobId, ({ event }) => {
        if (event.type !== 'progress') resolve();
      });
    });
    return { done, dispose };
  }
}
