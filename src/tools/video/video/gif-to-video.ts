import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { transcodeVideo } from '../_shared/transcode-video.js';
import { probeVideo } from '../_shared/video-input.js';

export default defineTool({
  id: 'gif-to-video',
  section: 'video',
  group: 'video',
  summary: 'Convert an animated GIF to MP4, WebM or MOV.',
  description:
    'H.264 for MP4 and MOV, VP9 for WebM; odd GIF sizes are trimmed by one pixel to the even size those codecs need (a GIF one pixel wide or high becomes WebM only). Transparency becomes black.',
  input: { kind: 'file', accept: ['.gif'] },
  settings: z.object({
    format: z.enum(['mp4', 'webm', 'mov']).default('mp4').describe('Output container.'),
  }),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'video (MP4, WebM or MOV)',
  examples: ['anim.gif -o anim.mp4', 'anim.gif --format webm -o anim.webm'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const info = await probeVideo(input, ctx.signal);
    return transcodeVideo(ctx, input, info, {
      container: s.format,
      audio: false,
      // The even sides MP4 and MOV need come from transcodeVideo's crop (a 1x1 GIF is refused there);
      // WebM takes any size, a 1x1 GIF too.
      vf: 'setsar=1',
      stage: 'converting',
    });
  },
});
