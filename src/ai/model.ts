/**
 * How a model is declared: one file per model under src/ai/models/ (listed in models/list.ts), in the
 * manner of rembg's sessions — its files, its runtime, its own load() and predict() (normalisation in,
 * plain pixels/masks/boxes/text out). Models run inside the AI host (a worker, one per process, off the
 * event loop); tools call runModel() with plain data and never see tensors or sessions.
 */
import type { BundleId } from './bundles/manifest.js';

/** Inference runtimes a bundle can install (each a set of pinned npm tarballs, see src/ai/runtimes/). */
export type RuntimeId = 'onnxruntime' | 'tfjs' | 'whisper';

export interface ModelLoadContext {
  /** Absolute path of a bundle file by its manifest name. */
  file(name: string): string;
  /** The runtime's module as loaded by the host from the installed runtime (narrow it with src/ai/runtimes/<id>.ts). */
  runtime: unknown;
  /** Execution provider chosen by the host: 'cpu', or 'cuda' when a GPU and its libraries are present. */
  device: 'cpu' | 'cuda';
}

export interface PredictContext {
  signal: AbortSignal;
  /** fraction 0-1 of this prediction (tiles done…). */
  progress(fraction: number, stage?: string): void;
  /**
   * Native work this prediction leaves running after it answers (a stopped whisper.cpp chunk runs to
   * its end): the host keeps its worker, and the model counts as busy, until `work` settles, because
   * tearing the worker down under running native work aborts the process.
   */
  linger?(work: Promise<unknown>): void;
}

export interface ModelDef<I = unknown, O = unknown, S = unknown> {
  /** Stable id, e.g. 'isnet-general'; shown in results as `model`. */
  id: string;
  bundle: BundleId;
  runtime: RuntimeId;
  /** Manifest file names this model needs. */
  files: string[];
  load(ctx: ModelLoadContext): Promise<S>;
  predict(state: S, input: I, ctx: PredictContext): Promise<O>;
  dispose?(state: S): Promise<void>;
}

export function defineModel<I, O, S>(def: ModelDef<I, O, S>): ModelDef<I, O, S> {
  return def;
}
