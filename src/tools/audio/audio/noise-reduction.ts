import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { probeAudio } from '../_shared/audio-input.js';
import { transcodeAudio } from '../_shared/transcode-audio.js';

/**
 * afftdn: reduction (nr, dB) and assumed noise floor (nf, dB), tracked from the signal (tn). A stronger
 * setting also assumes louder noise: with a floor set far below the real one afftdn removes little.
 */
const STRENGTH = {
  light: 'afftdn=nr=6:nf=-40:tn=1',
  medium: 'afftdn=nr=12:nf=-35:tn=1',
  strong: 'afftdn=nr=24:nf=-30:tn=1',
} as const;

export default defineTool({
  id: 'noise-reduction',
  section: 'audio',
  group: 'audio',
  summary: 'Reduce background noise in audio.',
  description:
    'FFT denoiser (afftdn): light = 6 dB reduction for noise around -40 dB, medium = 12 dB around -35 dB, strong = 24 dB around -30 dB; the noise floor is tracked from the recording.',
  input: { kind: 'file', accept: ['audio/*'] },
  settings: z.object({
    strength: z.enum(['light', 'medium', 'strong']).default('medium').describe('Denoise strength.'),
  }),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'audio in the input format',
  examples: ['interview.wav --strength strong -o clean.wav'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const info = await probeAudio(input, ctx.signal);
    return transcodeAudio(ctx, input, info, { af: STRENGTH[s.strength], stage: 'denoising' });
  },
});
