/**
 * DDColor (Kang et al., ICCV 2023, Apache-2.0) colorization as ONNX, as its own inference script
 * feeds it: the photo's lightness alone (L* with a* = b* = 0, converted back to RGB) at 512×512,
 * float RGB 0–1, NCHW; one output, the predicted a*b* planes 1×2×512×512. The caller (tasks/colorize.ts)
 * scales the a*b* planes to the photo's size and puts them under the photo's own lightness, so detail
 * stays at full resolution.
 */
import { DDCOLOR_FILE } from '../bundles/object-eraser-colorize.js';
import { defineModel } from '../model.js';
import { ortSession } from '../runtimes/ort-session.js';
import type { OrtApi, OrtSession } from '../runtimes/ort-types.js';
import { checkInputCount, type Contract, firstOutput, runImported } from './onnx-contract.js';

export const DDCOLOR_SIZE = 512;

const contract: Contract = { file: DDCOLOR_FILE, bundle: 'object-eraser-colorize', expected: 'grey RGB 1×3×512×512 → a*b* 1×2×512×512' };

export interface DDColorInput {
  /** Grey RGB (lightness only) at DDCOLOR_SIZE², interleaved, 8-bit. */
  rgb: Uint8Array;
}

export interface DDColorOutput {
  size: number;
  /** a* plane then b* plane, size × size each. */
  ab: Float32Array;
}

export default defineModel<DDColorInput, DDColorOutput, { ort: OrtApi; session: OrtSession }>({
  id: 'ddcolor',
  bundle: 'object-eraser-colorize',
  runtime: 'onnxruntime',
  files: [DDCOLOR_FILE],
  async load(ctx) {
    const s = await ortSession(ctx, DDCOLOR_FILE);
    checkInputCount(s.session, 1, contract);
    return s;
  },
  async predict({ ort, session }, input, ctx) {
    const S = DDCOLOR_SIZE;
    const plane = S * S;
    if (input.rgb.length !== plane * 3) throw new Error(`ddcolor: input must be ${S}×${S} RGB`);
    const data = new Float32Array(3 * plane);
    for (let p = 0; p < plane; p++) {
      data[p] = input.rgb[p * 3]! / 255;
      data[plane + p] = input.rgb[p * 3 + 1]! / 255;
      data[2 * plane + p] = input.rgb[p * 3 + 2]! / 255;
    }
    ctx.signal.throwIfAborted();
    const out = await runImported(session, { [session.inputNames[0]!]: new ort.Tensor('float32', data, [1, 3, S, S]) }, contract);
    ctx.signal.throwIfAborted();
    const o = firstOutput(out, session, [1, 2, S, S], contract);
    ctx.progress(1);
    return { size: S, ab: Float32Array.from(o.data as Float32Array) };
  },
  async dispose({ session }) {
    await session.release();
  },
});
