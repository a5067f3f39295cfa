/**
 * LaMa inpainting (Suvorov et al., "Resolution-robust Large Mask Inpainting with Fourier
 * Convolutions", Apache-2.0) as ONNX, in the form of the published export (Carve/LaMa-ONNX): two
 * inputs, the image 1×3×512×512 float RGB 0–1 and the mask 1×1×512×512 float (1 = hole), and one
 * output 1×3×512×512 RGB. Exports differ in the output's range (0–1 or 0–255): it is read from the
 * output itself (a maximum above 2 means 0–255). The network sees the masked pixels as holes whatever
 * their value; known pixels are taken from the input again by the caller.
 *
 * A tile smaller than 512 (a small image) is padded by reflection to 512 and cropped back; tasks/inpaint.ts never sends a larger one.
 */
import { LAMA_FILE } from '../bundles/object-eraser-colorize.js';
import { defineModel } from '../model.js';
import { ortSession } from '../runtimes/ort-session.js';
import type { OrtApi, OrtSession } from '../runtimes/ort-types.js';
import { checkInputCount, type Contract, firstOutput, runImported } from './onnx-contract.js';

export const LAMA_SIZE = 512;

export interface LamaInput {
  width: number;
  height: number;
  /** Interleaved RGB, width × height × 3. */
  rgb: Uint8Array;
  /** width × height; non-zero = hole. */
  mask: Uint8Array;
}

export interface LamaOutput {
  width: number;
  height: number;
  rgb: Uint8Array;
}

/** Reflect index i into 0…n-1 (…2 1 0 1 2… n-2 n-1 n-2…). */
export function reflect(i: number, n: number): number {
  if (n === 1) return 0;
  const period = 2 * (n - 1);
  const m = ((i % period) + period) % period;
  return m < n ? m : period - m;
}

/** NCHW float planes for a network of side S from an RGB tile (reflect-padded) and its mask. */
export function lamaTensors(input: LamaInput, S = LAMA_SIZE): { image: Float32Array; mask: Float32Array } {
  const { width: w, height: h, rgb } = input;
  if (w > S || h > S) throw new Error(`LaMa tile ${w}×${h} is larger than ${S}×${S}`);
  const plane = S * S;
  const image = new Float32Array(3 * plane);
  const mask = new Float32Array(plane);
  for (let y = 0; y < S; y++) {
    const sy = reflect(y, h);
    for (let x = 0; x < S; x++) {
      const sx = reflect(x, w);
      const s = sy * w + sx;
      const p = y * S + x;
      const hole = input.mask[s] ? 1 : 0;
      // Padding copies the tile by reflection, holes included (filled, then cropped away).
      mask[p] = hole;
      image[p] = hole ? 0 : rgb[s * 3]! / 255;
      image[plane + p] = hole ? 0 : rgb[s * 3 + 1]! / 255;
      image[2 * plane + p] = hole ? 0 : rgb[s * 3 + 2]! / 255;
    }
  }
  return { image, mask };
}

/** The tile's RGB from the network's output planes (range read from the data), cropped to w×h. */
export function lamaOutput(out: Float32Array, w: number, h: number, S = LAMA_SIZE): Uint8Array {
  const plane = S * S;
  let max = 0;
  for (let i = 0; i < out.length; i++) if (out[i]! > max) max = out[i]!;
  const k = max > 2 ? 1 : 255;
  const rgb = new Uint8Array(w * h * 3);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const p = y * S + x;
      const q = (y * w + x) * 3;
      for (let c = 0; c < 3; c++) rgb[q + c] = Math.max(0, Math.min(255, Math.round(out[c * plane + p]! * k)));
    }
  }
  return rgb;
}

function lama(id: string, file: string) {
  const contract: Contract = {
    file,
    bundle: 'object-eraser-colorize',
    expected: 'image 1×3×512×512 and mask 1×1×512×512 → 1×3×512×512',
  };
  return defineModel<LamaInput, LamaOutput, { ort: OrtApi; session: OrtSession }>({
    id,
    bundle: 'object-eraser-colorize',
    runtime: 'onnxruntime',
    files: [file],
    async load(ctx) {
      const s = await ortSession(ctx, file);
      checkInputCount(s.session, 2, contract);
      return s;
    },
    async predict({ ort, session }, input, ctx) {
      const S = LAMA_SIZE;
      const t = lamaTensors(input, S);
      const names = session.inputNames;
      const maskName = names.find((n) => /mask/i.test(n)) ?? names[1]!;
      const imageName = names.find((n) => n !== maskName)!;
      ctx.signal.throwIfAborted();
      const out = await runImported(
        session,
        {
          [imageName]: new ort.Tensor('float32', t.image, [1, 3, S, S]),
          [maskName]: new ort.Tensor('float32', t.mask, [1, 1, S, S]),
        },
        contract,
      );
      ctx.signal.throwIfAborted();
      const o = firstOutput(out, session, [1, 3, S, S], contract);
      const rgb = lamaOutput(o.data as Float32Array, input.width, input.height, S);
      ctx.progress(1);
      return { width: input.width, height: input.height, rgb };
    },
    async dispose({ session }) {
      await session.release();
    },
  });
}

export const lamaFp32 = lama('lama-fp32', LAMA_FILE);
