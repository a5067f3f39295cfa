import { z } from 'zod';
import { KilnError } from '../../../core/errors.js';
import { defineTool } from '../../../core/tool.js';
import { ffmpegCapabilities } from '../../../engines/ffmpeg/capabilities.js';
import { probeAudio } from '../_shared/audio-input.js';
import { atempoChain } from '../_shared/tempo.js';
import { transcodeAudio } from '../_shared/transcode-audio.js';

/**
 * Shortest clip shifted: rubberband fails under a few hundred samples ("Error marking filters as
 * finished": 0.03 s at 8 kHz) and atempo returns no samples at all for a clip that short.
 */
const MIN_S = 0.05;

export default defineTool({
  id: 'pitch-shift',
  section: 'audio',
  group: 'audio',
  summary: 'Shift pitch by up to an octave.',
  description:
    'Uses the rubberband filter (high quality, formants kept) when the ffmpeg build has it; otherwise resamples (asetrate) and restores the tempo with atempo. The length stays the same.',
  input: { kind: 'file', accept: ['audio/*'] },
  settings: z.object({
    semitones: z.int().min(-12).max(12).default(3).describe('Semitones (non-zero).'),
  }),
  check: (s) => {
    if (s.semitones === 0) return 'semitones must not be 0.';
  },
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'audio in the input format',
  examples: ['voice.wav --semitones -3 -o deeper.wav'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const info = await probeAudio(input, ctx.signal);
    const ratio = 2 ** (s.semitones / 12);
    const sr = info.audio.sampleRate ?? 48000;
    if (info.duration > 0 && info.duration < MIN_S)
      throw new KilnError('UNSUPPORTED_INPUT', `${input.name} is too short to pitch-shift: it needs at least ${MIN_S} s of audio.`, {
        reason: 'audio-too-short',
      });
    const rubberband = (await ffmpegCapabilities()).rubberband;
    const af = rubberband
      ? `rubberband=pitch=${ratio.toFixed(6)}:pitchq=quality`
      : `asetrate=${Math.round(sr * ratio)},aresample=${sr},${atempoChain(1 / ratio)}`;
    const res = await transcodeAudio(ctx, input, info, { af, stage: 'shifting' });
    return {
      ...res,
      data: { ...res.data, semitones: s.semitones, ratio: Number(ratio.toFixed(6)), method: rubberband ? 'rubberband' : 'asetrate+atempo' },
    };
  },
});
