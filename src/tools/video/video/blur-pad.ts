import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { displaySize } from '../../../engines/ffmpeg/probe.js';
import { padSize } from '../_shared/pad.js';
import { transcodeVideo } from '../_shared/transcode-video.js';
import { probeVideo } from '../_shared/video-input.js';

export default defineTool({
  id: 'blur-pad',
  section: 'video',
  group: 'video',
  summary: 'Pad a video to a target aspect ratio with a blurred copy of itself.',
  description:
    'The background is the video scaled to cover the target frame and blurred (Gaussian sigma = blur); the sharp video sits centred on top.',
  input: { kind: 'file', accept: ['video/*'] },
  settings: z.object({
    target: z.enum(['16:9', '9:16', '1:1', '4:3', '3:4']).default('16:9').describe('Target aspect ratio.'),
    blur: z.number().min(2).max(50).default(20).describe('Background blur strength.'),
  }),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'video in the input format',
  examples: ['vertical.mp4 --target 16:9 -o wide.mp4'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const info = await probeVideo(input, ctx.signal);
    const src = displaySize(info.video);
    const { width: W, height: H } = padSize(src, s.target);
    const complex =
      `[0:v]setsar=1,split[a][b];[a]scale=${W}:${H}:force_original_aspect_ratio=increase,crop=${W}:${H},gblur=sigma=${s.blur}[bg];` +
      `[b]scale=${src.width}:${src.height}[fg];[bg][fg]overlay=(W-w)/2:(H-h)/2,format=yuv420p[v]`;
    return transcodeVideo(ctx, input, info, { complex, maps: ['[v]'], stage: 'padding', keepStreams: true });
  },
});
