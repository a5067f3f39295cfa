/**
 * GFPGAN v1.4 face restoration as ONNX (the upscale-enhance bundle's `gfpgan-v1.4.onnx`, installed
 * by import). Contract (as the common ONNX exports): input 1×3×512×512 float32 RGB normalised to
 * −1…1 ((v/255 − 0.5) / 0.5), output the same shape and range. Faces arrive aligned to the FFHQ
 * 512 template (src/ai/tasks/enhance-faces.ts), one network run per face, the signal checked
 * between faces.
 */
import { KilnError } from '../../core/errors.js';
import { GFPGAN_FILE } from '../bundles/upscale-enhance.js';
import { defineModel } from '../model.js';
import { ortSession } from '../runtimes/ort-session.js';
import type { OrtApi, OrtSession } from '../runtimes/ort-types.js';
import { checkInputCount, type Contract, firstOutput, runImported } from './onnx-contract.js';
import { fromPlanar, toPlanar } from './onnx-image.js';

export const GFPGAN_SIZE = 512;

const contract: Contract = { file: GFPGAN_FILE, bundle: 'upscale-enhance', expected: 'RGB 1×3×512×512 in −1…1 → the same' };

export interface FaceRestoreInput {
  count: number;
  /** `count` aligned 512×512 RGB crops one after the other. */
  rgb: Uint8Array;
}

export interface FaceRestoreOutput {
  count: number;
  /** `count` restored 512×512 RGB crops. */
  rgb: Uint8Array;
}

export default defineModel<FaceRestoreInput, FaceRestoreOutput, { ort: OrtApi; session: OrtSession }>({
  id: 'gfpgan',
  bundle: 'upscale-enhance',
  runtime: 'onnxruntime',
  files: [GFPGAN_FILE],
  async load(ctx) {
    const s = await ortSession(ctx, GFPGAN_FILE);
    checkInputCount(s.session, 1, contract);
    return s;
  },
  async predict({ ort, session }, input, ctx) {
    const S = GFPGAN_SIZE;
    const one = S * S * 3;
    if (input.rgb.length !== input.count * one) throw new KilnError('INTERNAL', `gfpgan: expected ${input.count} crops of ${S}×${S} RGB.`);
    const rgb = new Uint8Array(input.count * one);
    for (let i = 0; i < input.count; i++) {
      ctx.signal.throwIfAborted();
      const data = toPlanar(input.rgb.subarray(i * one, (i + 1) * one), S, S, 0.5, 0.5);
      const r = await runImported(session, { [session.inputNames[0]!]: new ort.Tensor('float32', data, [1, 3, S, S]) }, contract);
      const y = firstOutput(r, session, [1, 3, S, S], contract);
      const px = fromPlanar(y.data as Float32Array, S, S, 0.5, 0.5);
      for (let j = 0; j < one; j++) rgb[i * one + j] = Math.round(px[j]!);
      ctx.progress((i + 1) / input.count, `face ${i + 1}/${input.count}`);
    }
    return { count: input.count, rgb };
  },
  async dispose({ session }) {
    await session.release();
  },
});
