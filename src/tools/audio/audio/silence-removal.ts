import { z } from 'zod';
import { KilnError } from '../../../core/errors.js';
import { defineTool } from '../../../core/tool.js';
import { probeAudio } from '../_shared/audio-input.js';
import { transcodeAudio } from '../_shared/transcode-audio.js';

export default defineTool({
  id: 'silence-removal',
  section: 'audio',
  group: 'audio',
  summary: 'Remove silent stretches below a threshold.',
  description:
    'Every stretch quieter than thresholdDb for at least minSilenceS is removed, at the start, the end and in between (silenceremove).',
  input: { kind: 'file', accept: ['audio/*'] },
  settings: z.object({
    thresholdDb: z.number().min(-80).max(-20).default(-50).describe('Silence threshold.'),
    minSilenceS: z.number().min(0.1).max(5).default(0.5).describe('Shortest silence to remove.'),
  }),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'audio in the input format',
  examples: ['recording.wav --threshold-db -45 --min-silence-s 1 -o tight.wav'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const info = await probeAudio(input, ctx.signal);
    const t = `${s.thresholdDb}dB`;
    const af = `silenceremove=start_periods=1:start_duration=0:start_threshold=${t}:stop_periods=-1:stop_duration=${s.minSilenceS}:stop_threshold=${t}:detection=peak`;
    return transcodeAudio(ctx, input, info, { af, stage: 'removing silence' }).catch((e: unknown) => {
      if (e instanceof KilnError && e.reason === 'empty-output')
        throw new KilnError('UNSUPPORTED_INPUT', `Nothing would be left: all of ${input.name} is quieter than ${s.thresholdDb} dB.`, {
          reason: 'all-silent',
        });
      throw e;
    });
  },
});
