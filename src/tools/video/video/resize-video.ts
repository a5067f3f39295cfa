import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { displaySize, even } from '../../../engines/ffmpeg/probe.js';
import { transcodeVideo } from '../_shared/transcode-video.js';
import { probeVideo } from '../_shared/video-input.js';

const PRESET_HEIGHT = { '2160p': 2160, '1440p': 1440, '1080p': 1080, '720p': 720, '480p': 480, '360p': 360 } as const;

export default defineTool({
  id: 'resize-video',
  section: 'video',
  group: 'video',
  summary: 'Scale a video to a preset resolution or custom size.',
  description:
    'A preset sets the height (the width follows the aspect ratio). With custom, give width and/or height; one alone keeps the aspect ratio. Sizes are rounded to even numbers, as H.264 and VP9 need.',
  input: { kind: 'file', accept: ['video/*'] },
  settings: z.object({
    width: z.int().min(16).max(7680).optional().describe('Target width (preset custom).'),
    height: z.int().min(16).max(4320).optional().describe('Target height (preset custom).'),
    preset: z
      .enum(['custom', '2160p', '1440p', '1080p', '720p', '480p', '360p'])
      .default('custom')
      .describe('Resolution preset; with custom at least one of width/height is required.'),
  }),
  check: (s) => {
    if (s.preset === 'custom' && s.width === undefined && s.height === undefined)
      return 'resize-video needs width or height (or a preset).';
  },
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'video in the input format',
  examples: ['clip.mp4 --preset 720p -o clip-720.mp4', 'clip.mp4 --width 640 -o small.mp4'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const info = await probeVideo(input, ctx.signal);
    const src = displaySize(info.video);
    let w: number;
    let h: number;
    if (s.preset !== 'custom') {
      h = PRESET_HEIGHT[s.preset];
      w = even((src.width * h) / src.height);
    } else if (s.width !== undefined && s.height !== undefined) {
      [w, h] = [even(s.width), even(s.height)];
    } else if (s.width !== undefined) {
      w = even(s.width);
      h = even((src.height * s.width) / src.width);
    } else {
      h = even(s.height!);
      w = even((src.width * s.height!) / src.height);
    }
    return transcodeVideo(ctx, input, info, { vf: `scale=${w}:${h}:flags=bicubic,setsar=1`, stage: 'resizing', keepStreams: true });
  },
});
