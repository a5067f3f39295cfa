import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { progressSpan } from '../../_shared/progress.js';
import { probeAudio } from '../_shared/audio-input.js';
import { LOUDNORM_TARGET, measureLoudnorm } from '../_shared/loudness.js';
import { transcodeAudio } from '../_shared/transcode-audio.js';

export default defineTool({
  id: 'normalize-audio',
  section: 'audio',
  group: 'audio',
  summary: 'Normalize loudness to -16 LUFS (EBU R128).',
  description:
    'Two passes: loudnorm measures the input, then applies the measured values to reach -16 LUFS integrated, -1.5 dBTP true peak, LRA 11.',
  input: { kind: 'file', accept: ['audio/*'] },
  settings: z.object({}),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'audio in the input format',
  examples: ['podcast.mp3 -o podcast-normalized.mp3'],
  async run(ctx, { files }) {
    const input = files[0]!;
    const info = await probeAudio(input, ctx.signal);
    const filter = await measureLoudnorm(input.path, info.duration, {
      signal: ctx.signal,
      onProgress: progressSpan(ctx, 0, 45, 'measuring'),
    });
    // loudnorm works at 192 kHz internally; resample back to the input's rate.
    const sr = info.audio.sampleRate ?? 48000;
    const res = await transcodeAudio(ctx, input, info, {
      af: filter,
      outArgs: ['-ar', String(sr)],
      progress: [45, 100],
      stage: 'normalizing',
    });
    return { ...res, data: { ...res.data, targetLufs: LOUDNORM_TARGET.i, truePeakDb: LOUDNORM_TARGET.tp } };
  },
});
