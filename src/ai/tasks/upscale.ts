/**
 * Super-resolution of a decoded image: the RGB goes through an ESRGAN/RDN network of the
 * upscale-enhance bundle in the AI host, tiled (src/ai/models/tiles.ts: overlap, feathered blend,
 * memory budget from KILN_AI_TILE / KILN_AI_TILE_MB, progress per tile, cancel between tiles). A
 * non-integer scale runs the next integer network and sharp's Lanczos brings the result to exactly
 * round(scale × size). Alpha, when present, is resampled with Lanczos (the networks are RGB only).
 */
import { ESRGAN_SCALES, type EsrganVariant, type UpscaleOutput } from '../models/esrgan.js';
import type { DenoiseOutput } from '../models/denoise.js';
import { type ModelCall, type RunInfo, runModel } from '../run-model.js';

export interface RawRgb {
  width: number;
  height: number;
  rgb: Uint8Array;
}

export interface UpscaleOptions {
  scale: number;
  variant: EsrganVariant;
  /** Core tile side, input pixels (default: the memory budget's). */
  tile?: number;
  overlap?: number;
}

export interface Upscaled extends RawRgb {
  /** The network's own scale (2, 3 or 4). */
  modelScale: number;
  tiles: number;
  tile: number;
  info: RunInfo;
}

/** The network for `scale`: the smallest of 2, 3, 4 that is ≥ scale. */
export function modelScaleFor(scale: number): number {
  return ESRGAN_SCALES.find((s) => s >= scale - 1e-9) ?? 4;
}

export function esrganModelId(variant: EsrganVariant, scale: number): string {
  return `esrgan-${variant}-x${modelScaleFor(scale)}`;
}

/** RGB through the network (no final resize: width × modelScale). */
export async function superResolve(img: RawRgb, o: UpscaleOptions, call: ModelCall): Promise<Upscaled> {
  const modelScale = modelScaleFor(o.scale);
  const { output, info } = await runModel<UpscaleOutput>(
    esrganModelId(o.variant, o.scale),
    {
      width: img.width,
      height: img.height,
      rgb: img.rgb,
      ...(o.tile && { tile: o.tile }),
      ...(o.overlap !== undefined && { overlap: o.overlap }),
    },
    call,
  );
  return { width: output.width, height: output.height, rgb: output.rgb, modelScale, tiles: output.tiles, tile: output.tile, info };
}

/** RGB through the imported denoising network (same size), tiled like super-resolution. */
export async function denoiseRgb(
  img: RawRgb,
  call: ModelCall,
  o: { tile?: number; overlap?: number } = {},
): Promise<RawRgb & { tiles: number; info: RunInfo }> {
  const { output, info } = await runModel<DenoiseOutput>('denoise', { width: img.width, height: img.height, rgb: img.rgb, ...o }, call);
  return { width: output.width, height: output.height, rgb: output.rgb, tiles: output.tiles, info };
}

/** `a` + strength × (`b` − `a`), per byte (a partial application of a network's result). */
export function mixRgb(a: Uint8Array, b: Uint8Array, strength: number): Uint8Array {
  if (strength >= 1) return b;
  const out = new Uint8Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = Math.round(a[i]! + (b[i]! - a[i]!) * strength);
  return out;
}
