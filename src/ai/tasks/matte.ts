/**
 * Foreground matte of an image with ISNet: the image is resampled to the model's 1024×1024 by sharp
 * (fast, off the event loop), the model runs in the host, and the mask is resampled back to the
 * image's size. Tools compose backgrounds, blur and shadows from this mask.
 */
import type { Sharp } from 'sharp';
import { getSharp } from '../../engines/sharp.js';
import { ISNET_SIZE, type MatteOutput } from '../models/isnet.js';
import { type ModelCall, type RunInfo, runModel } from '../run-model.js';

export type MatteModel = 'isnet-fp16' | 'isnet-quint8';

export interface Matte {
  width: number;
  height: number;
  /** 0–255 per pixel, width × height bytes. */
  alpha: Buffer;
  info: RunInfo;
}

/** `image` is a sharp pipeline of the (already decoded, oriented) input. */
export async function foregroundMatte(
  image: Sharp,
  size: { width: number; height: number },
  model: MatteModel,
  call: ModelCall,
): Promise<Matte> {
  const sharp = await getSharp();
  const S = ISNET_SIZE;
  const rgb = await image.clone().removeAlpha().resize(S, S, { fit: 'fill', kernel: 'cubic' }).raw().toBuffer();
  const { output, info } = await runModel<MatteOutput>(
    model,
    { width: S, height: S, rgb: new Uint8Array(rgb.buffer, rgb.byteOffset, rgb.length) },
    call,
  );
  const alpha = await sharp(Buffer.from(output.alpha.buffer, output.alpha.byteOffset, output.alpha.length), {
    raw: { width: S, height: S, channels: 1 },
  })
    .resize(size.width, size.height, { fit: 'fill', kernel: 'cubic' })
    // sharp turns a one-band raw input into sRGB on output; keep the one band.
    .extractChannel(0)
    .raw()
    .toBuffer();
  return { width: size.width, height: size.height, alpha, info };
}
