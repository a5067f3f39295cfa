import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { probeVideo, requireMaxDuration, transcodeVideo } from '../../../engines/ffmpeg.js';

/** The reverse filters hold every decoded frame in memory, hence the spec's limit. */
const MAX_S = 5 * 60;

export default defineTool({
  id: 'reverse-video',
  section: 'video',
  group: 'video',
  summary: 'Play a clip (up to 5 minutes) backwards.',
  description: 'Video and audio are both reversed. Inputs longer than 5 minutes are refused before any work (LIMIT_EXCEEDED).',
  input: { kind: 'file', accept: ['video/*'] },
  settings: z.object({}),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'video in the input format',
  examples: ['clip.mp4 -o backwards.mp4'],
  async run(ctx, { files }) {
    const input = files[0]!;
    const info = await probeVideo(input, ctx.signal);
    requireMaxDuration(info, MAX_S, input.name);
    return transcodeVideo(ctx, input, info, { vf: 'reverse', af: 'areverse', stage: 'reversing' });
  },
});
