/**
 * The job queue interface: runs tasks with bounded concurrency and can cancel them. The in-process
 * implementation is the default; a distributed one (Redis) must keep the same contract.
 */
export interface QueueState {
  kind: 'in-process' | 'redis';
  concurrency: number;
  running: number;
  queued: number;
}

export interface JobQueue {
  /**
   * Runs task when a slot is free. Rejects with KilnError CANCELLED when cancelled before it starts;
   * once started, cancellation aborts the signal and the task decides how to end.
   */
  run<T>(jobId: string, task: (signal: AbortSignal) => Promise<T>): Promise<T>;
  /** True when the job was queued or running here. */
  cancel(jobId: string): boolean;
  state(): QueueState;
  /** Quick readiness check (the backing store answers). */
  ping(): Promise<void>;
  /** Stops taking work and aborts what runs. */
  close(): Promise<void>;
}
