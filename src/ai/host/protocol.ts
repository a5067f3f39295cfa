/** Messages between the model host (main thread) and its worker. */
export type ToWorker =
  | { type: 'run'; id: number; model: string; dataDir: string; input: unknown }
  | { type: 'cancel'; id: number }
  | { type: 'stats'; id: number }
  | { type: 'idle'; ms: number };

export interface RunInfo {
  model: string;
  device: 'cpu' | 'cuda';
  provider: string;
  /** True when the model was already loaded. */
  warm: boolean;
  loadMs: number;
  runMs: number;
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
