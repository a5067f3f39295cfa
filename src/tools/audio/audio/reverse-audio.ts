import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { probeAudio, requireMaxDuration, transcodeAudio } from '../../../engines/ffmpeg.js';

/** areverse holds the whole decoded track in memory (about 1.4 GB per hour of 48 kHz stereo float). */
const MAX_S = 3 * 3600;

export default defineTool({
  id: 'reverse-audio',
  section: 'audio',
  group: 'audio',
  summary: 'Reverse an audio file.',
  description: 'Plays the audio backwards. Inputs up to 3 hours (the whole track is held in memory).',
  input: { kind: 'file', accept: ['audio/*'] },
  settings: z.object({}),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'audio in the input format',
  examples: ['song.mp3 -o backwards.mp3'],
  async run(ctx, { files }) {
    const input = files[0]!;
    const info = await probeAudio(input, ctx.signal);
    requireMaxDuration(info, MAX_S, input.name);
    return transcodeAudio(ctx, input, info, { af: 'areverse', stage: 'reversing' });
  },
});
