import { KilnError } from '../../../core/errors.js';
import { runFfmpeg } from '../../../engines/ffmpeg/run.js';

export interface LoudnormMeasure {
  input_i: string;
  input_tp: string;
  input_lra: string;
  input_thresh: string;
  target_offset: string;
}

export const LOUDNORM_TARGET = { i: -16, tp: -1.5, lra: 11 };

/**
 * Two-pass EBU R128: pass one measures the input, pass two applies loudnorm with the measured values
 * (linear when possible), which lands on the target far more precisely than a single dynamic pass.
 * Returns the filter for pass two.
 */
export async function measureLoudnorm(
  input: string,
  durationS: number,
  opts: { signal?: AbortSignal; onProgress?: (pct: number) => void; extraInputArgs?: string[]; track?: number },
): Promise<string> {
  const t = LOUDNORM_TARGET;
  const res = await runFfmpeg(
    [
      ...(opts.extraInputArgs ?? []),
      '-i',
      input,
      // Without a map ffmpeg measures its own pick (the track with the most channels), not the first.
      '-map',
      `0:a:${opts.track ?? 0}`,
      '-vn',
      '-sn',
      '-af',
      `loudnorm=I=${t.i}:TP=${t.tp}:LRA=${t.lra}:print_format=json`,
      '-f',
      'null',
      '-',
    ],
    { signal: opts.signal, durationS, onProgress: opts.onProgress, logLevel: 'info' },
  );
  const m = /\{[^{}]*"input_i"[^{}]*\}/.exec(res.stderr);
  if (!m) throw new KilnError('INTERNAL', 'ffmpeg loudnorm did not report its measurement.');
  const j = JSON.parse(m[0]) as LoudnormMeasure;
  if (!Number.isFinite(Number(j.input_i))) {
    // A peak but no integrated loudness: shorter than one 400 ms gating block (a 0.2 s beep), not silence.
    if (Number.isFinite(Number(j.input_tp)))
      throw new KilnError('UNSUPPORTED_INPUT', 'The audio is too short to measure its loudness: EBU R128 needs at least 0.4 s of sound.', {
        reason: 'audio-too-short',
      });
    throw new KilnError('UNSUPPORTED_INPUT', 'The audio is silent: there is no loudness to normalize.', { reason: 'silent-audio' });
  }
  return `loudnorm=I=${t.i}:TP=${t.tp}:LRA=${t.lra}:measured_I=${j.input_i}:measured_TP=${j.input_tp}:measured_LRA=${j.input_lra}:measured_thresh=${j.input_thresh}:offset=${j.target_offset}:linear=true`;
}
