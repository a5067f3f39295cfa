import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { probeAudio, transcodeAudio } from '../../../engines/ffmpeg.js';

/** afftdn noise reduction (dB) and noise floor (dB); strong also tracks a changing noise floor. */
const STRENGTH = {
  light: 'afftdn=nr=6:nf=-50',
  medium: 'afftdn=nr=12:nf=-45',
  strong: 'afftdn=nr=24:nf=-40:tn=1',
} as const;

export default defineTool({
  id: 'noise-reduction',
  section: 'audio',
  group: 'audio',
  summary: 'Reduce background noise in audio.',
  description: 'FFT denoiser (afftdn): light = 6 dB reduction, medium = 12 dB, strong = 24 dB with noise tracking.',
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
