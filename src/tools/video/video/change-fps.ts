import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { transcodeVideo } from '../_shared/transcode-video.js';
import { probeVideo } from '../_shared/video-input.js';

export default defineTool({
  id: 'change-fps',
  section: 'video',
  group: 'video',
  summary: "Change a video's frame rate.",
  description: 'Frames are dropped or repeated to reach the new rate; the duration and the audio stay as they are.',
  input: { kind: 'file', accept: ['video/*'] },
  settings: z.object({
    fps: z.number().min(1).max(120).default(30).describe('Target frame rate.'),
  }),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'video in the input format',
  examples: ['clip.mp4 --fps 24 -o clip-24.mp4'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const info = await probeVideo(input, ctx.signal);
    return transcodeVideo(ctx, input, info, {
      vf: `fps=${s.fps}:round=up`,
      outArgs: ['-r', String(s.fps)],
      stage: 'retiming',
      keepStreams: true,
    });
  },
});
