import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { displaySize } from '../../../engines/ffmpeg/probe.js';
import { colorSchema, ffmpegColor } from '../../_shared/color.js';
import { padSize } from '../_shared/pad.js';
import { transcodeVideo } from '../_shared/transcode-video.js';
import { probeVideo } from '../_shared/video-input.js';

export default defineTool({
  id: 'aspect-pad',
  section: 'video',
  group: 'video',
  summary: 'Pad a video with solid bars to a target aspect ratio.',
  description: 'The picture is kept whole and centred; bars of the given colour fill the rest of the target ratio.',
  input: { kind: 'file', accept: ['video/*'] },
  settings: z.object({
    target: z.enum(['16:9', '9:16', '1:1', '4:3', '3:4']).default('9:16').describe('Target aspect ratio.'),
    color: colorSchema('#000000').describe('Bar color.'),
  }),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'video in the input format',
  examples: ['clip.mp4 --target 9:16 -o vertical.mp4', 'clip.mp4 --target 1:1 --color "#ffffff" -o square.mp4'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const info = await probeVideo(input, ctx.signal);
    const src = displaySize(info.video);
    const dst = padSize(src, s.target);
    const vf = `scale=${src.width}:${src.height},setsar=1,pad=${dst.width}:${dst.height}:(ow-iw)/2:(oh-ih)/2:color=${ffmpegColor(s.color)}`;
    return transcodeVideo(ctx, input, info, { vf, stage: 'padding', keepStreams: true });
  },
});
