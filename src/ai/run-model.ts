/**
 * The one call tools make to use a model: plain data in (pixels, samples), plain data out (masks,
 * boxes, text), run in the model host off the event loop. The answer names the model, device and
 * provider that ran, for the tool's result data.
 */
import { modelHost } from './host/host.js';
import type { RunInfo } from './host/protocol.js';
import { transferables } from './host/transfer.js';

export type { RunInfo } from './host/protocol.js';

export interface ModelCall {
  dataDir: string;
  signal?: AbortSignal;
  /** fraction 0-1 of this prediction. */
  progress?: (fraction: number, stage?: string) => void;
}

/** Runs `model` on `input`; typed-array buffers in `input` are moved to the worker, not copied. */
export async function runModel<O>(model: string, input: Record<string, unknown>, call: ModelCall): Promise<{ output: O; info: RunInfo }> {
  const r = await modelHost.run(model, call.dataDir, input, {
    signal: call.signal,
    progress: call.progress,
    transfer: transferables(input),
  });
  return r as { output: O; info: RunInfo };
}

/** Models loaded in this process now. */
export function loadedModels(): Promise<string[]> {
  return modelHost.loaded();
}
