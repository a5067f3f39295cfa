/** Messages between src/engines/chromium.ts (the caller's thread) and the Chromium worker (worker.ts). */
import type { BrowserContextOptions } from 'playwright-core';

/** A page task: the named export of a module the worker imports (see PageTask in chromium.ts). */
export interface TaskRef {
  module: string;
  name: string;
  args: unknown;
}

export type ToWorker =
  | {
      type: 'run';
      id: number;
      exe: string;
      options: BrowserContextOptions;
      task: TaskRef;
      timeoutMs: number;
      /** Open the next job's context and page once this one ends (a browser kept warm between jobs). */
      spare: boolean;
    }
  | { type: 'abort'; id: number }
  /** Launch the browser now, for a task that follows (prepareChromium); a failure waits for that task. */
  | { type: 'launch'; exe: string }
  /** Close the browser; the worker answers `closed`, then the caller ends the thread. */
  | { type: 'close' };

export interface WireError {
  code?: string;
  message: string;
  details?: unknown;
  reason?: string;
}

export type FromWorker =
  | { type: 'done'; id: number; value: unknown }
  | { type: 'failed'; id: number; error: WireError }
  /** What a task reports while it runs: progress, blocked requests. */
  | { type: 'event'; id: number; name: string; data: unknown }
  | { type: 'closed' };
