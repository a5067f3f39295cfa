import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { transcodeVideo } from '../_shared/transcode-video.js';
import { probeVideo } from '../_shared/video-input.js';

export default defineTool({
  id: 'video-color',
  section: 'video',
  group: 'video',
  summary: 'Adjust brightness, contrast, saturation and gamma of a video.',
  description:
    "ffmpeg's eq filter: brightness is added (-1 to 1), contrast, saturation and gamma multiply (1 = unchanged, saturation 0 = grayscale).",
  input: { kind: 'file', accept: ['video/*'] },
  settings: z.object({
    brightness: z.number().min(-1).max(1).default(0).describe('Brightness offset.'),
    contrast: z.number().min(0).max(4).default(1).describe('Contrast multiplier.'),
    saturation: z.number().min(0).max(3).default(1).describe('Saturation multiplier (0 = grayscale).'),
    gamma: z.number().min(0.1).max(10).default(1).describe('Gamma correction.'),
  }),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'video in the input format',
  examples: ['clip.mp4 --saturation 0 -o gray.mp4', 'clip.mp4 --brightness 0.1 --contrast 1.2 -o brighter.mp4'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const info = await probeVideo(input, ctx.signal);
    const vf = `eq=brightness=${s.brightness}:contrast=${s.contrast}:saturation=${s.saturation}:gamma=${s.gamma}`;
    return transcodeVideo(ctx, input, info, { vf, stage: 'adjusting', keepStreams: true });
  },
});
