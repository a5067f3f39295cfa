/** Opens an ONNX model on the device the host chose, with the threads src/ai/threads.ts gives it. */
import type { ModelLoadContext } from '../model.js';
import { type AiThreads, aiThreads } from '../threads.js';
import type { OrtApi, OrtSession } from './ort-types.js';

/** The options every session is created with (exported for the test of what reaches onnxruntime). */
export function ortSessionOptions(device: ModelLoadContext['device'], t: AiThreads = aiThreads()): Record<string, unknown> {
  return {
    executionProviders: device === 'cuda' ? ['cuda', 'cpu'] : ['cpu'],
    graphOptimizationLevel: 'all',
    intraOpNumThreads: t.threads,
    interOpNumThreads: 1,
    // Session config entry session.intra_op.allow_spinning (onnxruntime_session_options_config_keys.h);
    // the Node binding joins nested keys with dots and takes string values only.
    ...(t.spin ? {} : { extra: { session: { intra_op: { allow_spinning: '0' } } } }),
  };
}

export async function ortSession(ctx: ModelLoadContext, file: string): Promise<{ ort: OrtApi; session: OrtSession }> {
  const ort = ctx.runtime as OrtApi;
  const session = await ort.InferenceSession.create(ctx.file(file), ortSessionOptions(ctx.device));
  return { ort, session };
}
