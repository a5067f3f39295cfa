/**
 * Scratch detection of "Bringing Old Photos Back to Life" (Wan et al., MIT) as ONNX: a grey tile
 * 1×1×S×S normalised to −1…1 in, logits 1×1×S×S out; the scratch probability is their sigmoid
 * (upstream thresholds it at 0.4). tasks/restore.ts tiles the photo with overlap and sends S×S tiles.
 */
import { defineModel } from '../model.js';
import { ortSession } from '../runtimes/ort-session.js';
import type { OrtApi, OrtSession } from '../runtimes/ort-types.js';
import { checkInputCount, type Contract, firstOutput, runImported } from './onnx-contract.js';

export const SCRATCH_TILE = 512;

const contract: Contract = {
  file: 'scratch-detection.onnx',
  bundle: 'photo-restoration',
  expected: 'grey 1×1×512×512 in −1…1 → logits 1×1×512×512',
};

export interface ScratchInput {
  size: number;
  /** Grey, size × size bytes. */
  grey: Uint8Array;
}

export interface ScratchOutput {
  size: number;
  /** Scratch probability 0–255, size × size bytes. */
  prob: Uint8Array;
}

export default defineModel<ScratchInput, ScratchOutput, { ort: OrtApi; session: OrtSession }>({
  id: 'scratch-detection',
  bundle: 'photo-restoration',
  runtime: 'onnxruntime',
  files: ['scratch-detection.onnx'],
  async load(ctx) {
    const s = await ortSession(ctx, contract.file);
    checkInputCount(s.session, 1, contract);
    return s;
  },
  async predict({ ort, session }, input, ctx) {
    const S = input.size;
    if (S % 16 || input.grey.length !== S * S)
      throw new Error('scratch-detection: input must be a square grey tile, side a multiple of 16');
    const data = new Float32Array(S * S);
    for (let i = 0; i < S * S; i++) data[i] = (input.grey[i]! / 255 - 0.5) / 0.5;
    ctx.signal.throwIfAborted();
    const out = await runImported(session, { [session.inputNames[0]!]: new ort.Tensor('float32', data, [1, 1, S, S]) }, contract);
    const o = firstOutput(out, session, [1, 1, S, S], contract);
    const logits = o.data as Float32Array;
    const prob = new Uint8Array(S * S);
    for (let i = 0; i < S * S; i++) prob[i] = Math.round(255 / (1 + Math.exp(-logits[i]!)));
    ctx.progress(1);
    return { size: S, prob };
  },
  async dispose({ session }) {
    await session.release();
  },
});
