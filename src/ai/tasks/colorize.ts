/**
 * Colorization: DDColor predicts the a*b* colour planes of the photo at 512×512 from its lightness;
 * they are sampled up (bilinear, row by row — no full-size float planes are held) and put under the
 * photo's own full-resolution lightness, so detail is the photo's and only colour comes from the model.
 * `intensity` blends the predicted colour with the photo's own (0 = unchanged, 1 = the model's).
 *
 * The classical `tint` needs no model: shadows toward a cool, highlights toward a warm tone by
 * lightness (split toning). It is not natural colour, and results say so.
 */
import { getSharp } from '../../engines/sharp.js';
import { runWorker } from '../../core/worker.js';
import { labToRgb, rgbToLab } from '../classical/lab.js';
import type { ColorImage, RecolorJob } from '../classical/recolor.js';
import { DDCOLOR_SIZE, type DDColorOutput } from '../models/ddcolor.js';
import { type ModelCall, type RunInfo, runModel } from '../run-model.js';

export type { ColorImage } from '../classical/recolor.js';

export async function colorizeDDColor(img: ColorImage, intensity: number, call: ModelCall): Promise<{ rgb: Uint8Array; info: RunInfo }> {
  const sharp = await getSharp();
  const S = DDCOLOR_SIZE;
  const small = await sharp(img.rgb, { raw: { width: img.width, height: img.height, channels: 3 } })
    .resize(S, S, { fit: 'fill', kernel: 'cubic' })
    .raw()
    .toBuffer();
  // The network sees lightness only: L* with a* = b* = 0, back in RGB.
  const grey = new Uint8Array(S * S * 3);
  for (let p = 0; p < S * S; p++) {
    const [L] = rgbToLab(small[p * 3]!, small[p * 3 + 1]!, small[p * 3 + 2]!);
    const [r, g, b] = labToRgb(L, 0, 0);
    grey[p * 3] = r;
    grey[p * 3 + 1] = g;
    grey[p * 3 + 2] = b;
  }
  call.progress?.(0.1, 'colorizing (DDColor)');
  const { output, info } = await runModel<DDColorOutput>('ddcolor', { rgb: grey }, { ...call, progress: undefined });
  call.signal?.throwIfAborted();
  call.progress?.(0.7, 'applying colour');
  const job: RecolorJob = { img, intensity, ab: output.ab, size: output.size };
  const r = await runWorker<{ rgb: Uint8Array }>(
    new URL('../classical/recolor-worker.js', import.meta.url),
    job,
    call.signal ?? new AbortController().signal,
    'Colorizing',
  );
  return { rgb: r.rgb, info };
}

/** Split toning by lightness (no model): cool shadows, warm highlights; in a worker thread. */
export async function colorizeTint(img: ColorImage, intensity: number, signal: AbortSignal): Promise<Uint8Array> {
  const job: RecolorJob = { img, intensity };
  return (await runWorker<{ rgb: Uint8Array }>(new URL('../classical/recolor-worker.js', import.meta.url), job, signal, 'Colorizing')).rgb;
}
