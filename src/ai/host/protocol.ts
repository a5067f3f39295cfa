/** Messages between the model host (main thread) and its worker. */
import type { AiThreads } from '../threads.js';

export type ToWorker =
  | { type: 'run'; id: number; model: string; dataDir: string; input: unknown }
  | { type: 'cancel'; id: number }
  | { type: 'stats'; id: number }
  /** First message to a new worker: what only the main thread knows. */
  | { type: 'settings'; idleMs: number; sharedWith: number | undefined };

export interface RunInfo {
  model: string;
  device: 'cpu' | 'cuda';
  provider: string;
  /** True when the model was already loaded. */
  warm: boolean;
  loadMs: number;
  runMs: number;
  /** The threads the model was loaded to use (src/ai/threads.ts). */
  threads: AiThreads;
}

export interface WireError {
  code?: string;
  message: string;
  reason?: string;
  details?: unknown;
}

export type FromWorker =
  | { type: 'result'; id: number; output: unknown; info: RunInfo }
  | { type: 'error'; id: number; error: WireError }
  | { type: 'progress'; id: number; fraction: number; stage?: string }
  /** After the result or error: the run, and any native work it left running, has ended. */
  | { type: 'done'; id: number }
  | { type: 'stats'; id: number; loaded: string[] };
