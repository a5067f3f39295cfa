/** Opens an ONNX model on the device the host chose, with the threads this machine has. */
import { availableParallelism } from 'node:os';
import type { ModelLoadContext } from '../model.js';
import type { OrtApi, OrtSession } from './ort-types.js';

/** KILN_AI_THREADS caps the threads one model uses (default: every core). */
function threads(env: NodeJS.ProcessEnv = process.env): number {
  const n = Number(env.KILN_AI_THREADS);
  return Number.isInteger(n) && n > 0 ? n : availableParallelism();
}

export async function ortSession(ctx: ModelLoadContext, file: string): Promise<{ ort: OrtApi; session: OrtSession }> {
  const ort = ctx.runtime as OrtApi;
  const session = await ort.InferenceSession.create(ctx.file(file), {
    executionProviders: ctx.device === 'cuda' ? ['cuda', 'cpu'] : ['cpu'],
    graphOptimizationLevel: 'all',
    intraOpNumThreads: threads(),
    interOpNumThreads: 1,
  });
  return { ort, session };
}
