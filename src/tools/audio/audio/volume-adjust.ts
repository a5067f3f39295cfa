import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { probeAudio } from '../_shared/audio-input.js';
import { transcodeAudio } from '../_shared/transcode-audio.js';

export default defineTool({
  id: 'volume-adjust',
  section: 'audio',
  group: 'audio',
  summary: 'Raise or lower loudness by a gain in dB.',
  description:
    'A plain gain: +6 dB doubles the amplitude. Loud inputs raised far may clip; normalize-audio sets a target loudness instead.',
  input: { kind: 'file', accept: ['audio/*'] },
  settings: z.object({
    gainDb: z.number().min(-30).max(30).default(3).describe('Gain.'),
  }),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'audio in the input format',
  examples: ['quiet.mp3 --gain-db 6 -o louder.mp3'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const info = await probeAudio(input, ctx.signal);
    return transcodeAudio(ctx, input, info, { af: `volume=${s.gainDb}dB`, stage: 'adjusting' });
  },
});
