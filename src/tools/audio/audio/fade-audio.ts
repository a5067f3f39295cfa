import { z } from 'zod';
import { KilnError } from '../../../core/errors.js';
import { defineTool } from '../../../core/tool.js';
import { probeAudioLength } from '../_shared/audio-input.js';
import { transcodeAudio } from '../_shared/transcode-audio.js';

export default defineTool({
  id: 'fade-audio',
  section: 'audio',
  group: 'audio',
  summary: 'Add a fade-in and/or fade-out.',
  description: 'Linear fades; 0 turns one off. On a clip shorter than both fades together, each fade takes its share of the length.',
  input: { kind: 'file', accept: ['audio/*'] },
  settings: z.object({
    fadeInS: z.number().min(0).max(30).default(1).describe('Fade-in length.'),
    fadeOutS: z.number().min(0).max(30).default(1).describe('Fade-out length.'),
  }),
  check: (s) => {
    if (s.fadeInS === 0 && s.fadeOutS === 0) return 'fade-audio needs fadeInS or fadeOutS above 0.';
  },
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'audio in the input format',
  examples: ['song.mp3 --fade-in-s 2 --fade-out-s 5 -o faded.mp3'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const info = await probeAudioLength(ctx, input);
    const d = info.duration;
    // The fade-out is placed from the end: with no known length (no samples) it would start before 0.
    if (!(d > 0))
      throw new KilnError('UNSUPPORTED_INPUT', `${input.name} has no samples (or no known length) to fade.`, { reason: 'no-duration' });
    const k = d > 0 && s.fadeInS + s.fadeOutS > d ? d / (s.fadeInS + s.fadeOutS) : 1;
    const fin = s.fadeInS * k;
    const fout = s.fadeOutS * k;
    const af = [
      fin > 0 ? `afade=t=in:st=0:d=${fin.toFixed(4)}` : '',
      fout > 0 ? `afade=t=out:st=${(d - fout).toFixed(4)}:d=${fout.toFixed(4)}` : '',
    ]
      .filter(Boolean)
      .join(',');
    return transcodeAudio(ctx, input, info, { af, stage: 'fading' });
  },
});
