import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { transcodeVideo } from '../_shared/transcode-video.js';
import { probeVideo } from '../_shared/video-input.js';

const FILTER = { cw90: 'transpose=clock', ccw90: 'transpose=cclock', '180': 'hflip,vflip', hflip: 'hflip', vflip: 'vflip' } as const;

export default defineTool({
  id: 'rotate-video',
  section: 'video',
  group: 'video',
  summary: 'Rotate a video by 90/180 degrees or mirror it.',
  description: 'The pixels are transformed (not only a rotation flag), so every player shows the result the same way.',
  input: { kind: 'file', accept: ['video/*'] },
  settings: z.object({
    transform: z.enum(['cw90', 'ccw90', '180', 'hflip', 'vflip']).describe('Transformation.'),
  }),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'video in the input format',
  examples: ['clip.mp4 --transform cw90 -o upright.mp4'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const info = await probeVideo(input, ctx.signal);
    return transcodeVideo(ctx, input, info, { vf: FILTER[s.transform], stage: 'rotating', keepStreams: true });
  },
});
