/**
 * Neural denoising: a fully convolutional RGB network as ONNX (the upscale-enhance bundle's
 * `denoise.onnx`, installed by import: e.g. SCUNet or NAFNet-SIDD exported with dynamic height and
 * width). Contract: input 1×3×H×W float32 RGB 0–1, output the same shape, the denoised image 0–1.
 * Tiles (tiles.ts) are padded by edge repetition to a multiple of 16 (what U-Net-like denoisers
 * need) and cropped back; the context margin is 16 px and the feathered overlap 16 px.
 */
import { DENOISE_FILE } from '../bundles/upscale-enhance.js';
import { defineModel } from '../model.js';
import { ortSession } from '../runtimes/ort-session.js';
import type { OrtApi, OrtSession } from '../runtimes/ort-types.js';
import { checkInputCount, type Contract, firstOutput, runImported } from './onnx-contract.js';
import { cropFloat, fromPlanar, padEdge, toPlanar } from './onnx-image.js';
import { type RgbImage, runTiled, tileSide } from './tiles.js';

export const DENOISE_MULTIPLE = 16;

const contract: Contract = {
  file: DENOISE_FILE,
  bundle: 'upscale-enhance',
  expected: 'RGB 1×3×H×W in 0–1, any H and W that are multiples of 16 → the same shape',
};

export interface DenoiseInput extends RgbImage {
  tile?: number;
  overlap?: number;
}

export interface DenoiseOutput extends RgbImage {
  tiles: number;
  tile: number;
}

export default defineModel<DenoiseInput, DenoiseOutput, { ort: OrtApi; session: OrtSession }>({
  id: 'denoise',
  bundle: 'upscale-enhance',
  runtime: 'onnxruntime',
  files: [DENOISE_FILE],
  async load(ctx) {
    const s = await ortSession(ctx, DENOISE_FILE);
    checkInputCount(s.session, 1, contract);
    return s;
  },
  async predict({ ort, session }, input, ctx) {
    const M = DENOISE_MULTIPLE;
    // A U-Net at 64 channels keeps roughly 2 KB of activations per pixel.
    const tile = input.tile ?? tileSide(2048);
    let tiles = 0;
    const out = await runTiled(
      input,
      1,
      { tile, overlap: input.overlap ?? 16, margin: 16 },
      async ({ region, count }) => {
        tiles = count;
        const pw = Math.ceil(region.width / M) * M;
        const ph = Math.ceil(region.height / M) * M;
        const data = toPlanar(padEdge(region.rgb, region.width, region.height, pw, ph), pw, ph);
        const r = await runImported(session, { [session.inputNames[0]!]: new ort.Tensor('float32', data, [1, 3, ph, pw]) }, contract);
        const y = firstOutput(r, session, [1, 3, ph, pw], contract);
        return cropFloat(fromPlanar(y.data as Float32Array, pw, ph), pw, region.width, region.height);
      },
      ctx,
    );
    return { ...out, tiles, tile };
  },
  async dispose({ session }) {
    await session.release();
  },
});
