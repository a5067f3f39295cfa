import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { checkRange, clipLength } from '../../_shared/time-range.js';
import { probeAudio } from '../_shared/audio-input.js';
import { transcodeAudio } from '../_shared/transcode-audio.js';

export default defineTool({
  id: 'trim-audio',
  section: 'audio',
  group: 'audio',
  summary: 'Cut a section out of an audio file.',
  description: 'Keeps startS to endS (sample-accurate: the audio is re-encoded). endS beyond the end keeps the rest.',
  input: { kind: 'file', accept: ['audio/*'] },
  settings: z.object({
    startS: z.number().min(0).default(0).describe('Start time.'),
    endS: z.number().describe('End time; must be after startS.'),
  }),
  check: checkRange,
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'audio in the input format',
  examples: ['song.mp3 --start-s 30 --end-s 60 -o chorus.mp3'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const info = await probeAudio(input, ctx.signal);
    const dur = clipLength(info, s.startS, { endS: s.endS });
    return transcodeAudio(ctx, input, info, {
      inputArgs: ['-ss', String(s.startS)],
      outArgs: ['-t', dur.toFixed(6)],
      durationS: dur,
      stage: 'trimming',
    });
  },
});
