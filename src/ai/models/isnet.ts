/**
 * ISNet general-purpose matting (DIS): RGB at 1024×1024, each channel (v − 128) / 256, NCHW float32;
 * one output, the foreground probability 0–1 at 1024×1024. The fp16 and quantized uint8 files share
 * this interface. Input of another size is resampled here; tools usually send 1024×1024 already
 * (sharp resamples faster than JavaScript).
 */
import { defineModel } from '../model.js';
import type { OrtApi, OrtSession } from '../runtimes/ort-types.js';
import { ortSession } from '../runtimes/ort-session.js';
import { resizeBilinear } from './resample.js';

export const ISNET_SIZE = 1024;

export interface MatteInput {
  width: number;
  height: number;
  /** Interleaved RGB, width × height × 3 bytes. */
  rgb: Uint8Array;
}

export interface MatteOutput {
  width: number;
  height: number;
  /** Foreground alpha 0–255, width × height bytes. */
  alpha: Uint8Array;
}

function isnet(id: string, file: string) {
  return defineModel<MatteInput, MatteOutput, { ort: OrtApi; session: OrtSession }>({
    id,
    bundle: 'background-removal',
    runtime: 'onnxruntime',
    files: [file],
    async load(ctx) {
      return ortSession(ctx, file);
    },
    async predict({ ort, session }, input, ctx) {
      const S = ISNET_SIZE;
      const rgb = input.width === S && input.height === S ? input.rgb : resizeBilinear(input.rgb, input.width, input.height, 3, S, S);
      const plane = S * S;
      const data = new Float32Array(3 * plane);
      for (let i = 0, p = 0; p < plane; p++, i += 3) {
        data[p] = (rgb[i]! - 128) / 256;
        data[plane + p] = (rgb[i + 1]! - 128) / 256;
        data[2 * plane + p] = (rgb[i + 2]! - 128) / 256;
      }
      ctx.signal.throwIfAborted();
      ctx.progress(0.1, 'matting');
      const out = await session.run({ [session.inputNames[0]!]: new ort.Tensor('float32', data, [1, 3, S, S]) });
      ctx.signal.throwIfAborted();
      const prob = out[session.outputNames[0]!]!.data as Float32Array;
      const mask = new Uint8Array(plane);
      for (let p = 0; p < plane; p++) mask[p] = Math.round(Math.min(1, Math.max(0, prob[p]!)) * 255);
      const alpha = input.width === S && input.height === S ? mask : resizeBilinear(mask, S, S, 1, input.width, input.height);
      ctx.progress(1);
      return { width: input.width, height: input.height, alpha };
    },
    async dispose({ session }) {
      await session.release();
    },
  });
}

export const isnetFp16 = isnet('isnet-fp16', 'isnet-fp16.onnx');
export const isnetQuint8 = isnet('isnet-quint8', 'isnet-quint8.onnx');
