import { z } from 'zod';
import { KilnError } from '../../../core/errors.js';
import { defineTool } from '../../../core/tool.js';
import { probeAudio } from '../_shared/audio-input.js';
import { transcodeAudio } from '../_shared/transcode-audio.js';

export default defineTool({
  id: 'audio-channels',
  section: 'audio',
  group: 'audio',
  summary: 'Convert stereo to mono, mono to stereo, or swap channels.',
  description: 'stereo-to-mono averages the channels; mono-to-stereo copies the one channel to both sides; swap exchanges left and right.',
  input: { kind: 'file', accept: ['audio/*'] },
  settings: z.object({
    mode: z.enum(['stereo-to-mono', 'mono-to-stereo', 'swap']).describe('Channel operation.'),
  }),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'audio in the input format',
  examples: ['interview.wav --mode stereo-to-mono -o mono.wav', 'song.mp3 --mode swap -o swapped.mp3'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const info = await probeAudio(input, ctx.signal);
    const ch = info.audio.channels ?? 0;
    if (s.mode === 'mono-to-stereo' && ch !== 1)
      throw new KilnError('UNSUPPORTED_INPUT', `${input.name} is not mono (it has ${ch} channels).`);
    if (s.mode !== 'mono-to-stereo' && ch < 2)
      throw new KilnError('UNSUPPORTED_INPUT', `${input.name} is mono; ${s.mode} needs two channels.`);
    // More than two channels (5.1, 7.1): mono takes every channel through ffmpeg's own downmix, and a
    // swap exchanges front left and right and keeps the rest where they are. The stereo filters alone
    // kept the first two channels and dropped the others without a word.
    const layout = info.audio.channelLayout?.replace(/\(.*\)$/, '') || `${ch}c`;
    const rest = Array.from({ length: Math.max(0, ch - 2) }, (_, i) => `|c${i + 2}=c${i + 2}`).join('');
    const af = {
      'stereo-to-mono': ch > 2 ? 'aformat=channel_layouts=mono' : 'pan=mono|c0=0.5*c0+0.5*c1',
      'mono-to-stereo': 'pan=stereo|c0=c0|c1=c0',
      swap: ch > 2 ? `pan=${layout}|c0=c1|c1=c0${rest}` : 'pan=stereo|c0=c1|c1=c0',
    }[s.mode];
    return transcodeAudio(ctx, input, info, { af, stage: 'remixing' });
  },
});
