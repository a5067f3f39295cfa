import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { probeAudio } from '../_shared/audio-input.js';
import { atempoChain } from '../_shared/tempo.js';
import { retimedChapters } from '../../../engines/ffmpeg/chapters.js';
import { transcodeAudio } from '../_shared/transcode-audio.js';

export default defineTool({
  id: 'audio-speed',
  section: 'audio',
  group: 'audio',
  summary: 'Change playback speed without changing pitch.',
  description: 'Time-stretched with a chain of atempo filters (each 0.5-2x), so the pitch stays the same.',
  input: { kind: 'file', accept: ['audio/*'] },
  settings: z.object({
    factor: z.number().min(0.25).max(4).default(1.5).describe('Speed multiplier.'),
  }),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'audio in the input format',
  examples: ['lecture.mp3 --factor 1.5 -o faster.mp3'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const info = await probeAudio(input, ctx.signal);
    const chapters = await retimedChapters(info, (t) => t / s.factor, ctx.workDir, 1);
    return transcodeAudio(ctx, input, info, {
      af: atempoChain(s.factor),
      extraInputs: chapters.input,
      outArgs: chapters.map,
      durationS: info.duration / s.factor,
      stage: 'retiming',
    });
  },
});
