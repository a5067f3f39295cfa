import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { COMPRESSION } from '../../../engines/ffmpeg/codecs.js';
import { displaySize, even } from '../../../engines/ffmpeg/probe.js';
import { transcodeVideo } from '../_shared/transcode-video.js';
import { probeVideo } from '../_shared/video-input.js';

const SHORT_SIDE = { '1080p': 1080, '720p': 720, '480p': 480 } as const;

export default defineTool({
  id: 'compress-video',
  section: 'video',
  group: 'video',
  summary: 'Shrink a video with a compression strength and optional downscale.',
  description:
    'quality light/balanced/strong = H.264 CRF 23/28/33 (VP9 CRF 32/38/45 for WebM, MPEG-4 q 4/8/14 for AVI), audio 128/128/64 kbit/s. ' +
    'resolution sets the shorter side (1080, 720 or 480 px); videos already smaller are never enlarged.',
  input: { kind: 'file', accept: ['video/*'] },
  settings: z.object({
    quality: z.enum(['light', 'balanced', 'strong']).default('balanced').describe('Compression strength.'),
    resolution: z.enum(['original', '1080p', '720p', '480p']).default('original').describe('Output resolution.'),
  }),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  execution: 'long',
  output: 'video in the input format',
  examples: ['clip.mp4 --quality strong --resolution 720p -o small.mp4'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const info = await probeVideo(input, ctx.signal);
    const q = COMPRESSION[s.quality];
    let vf: string | undefined;
    if (s.resolution !== 'original') {
      const { width, height } = displaySize(info.video);
      const target = SHORT_SIDE[s.resolution];
      const short = Math.min(width, height);
      if (short > target) {
        const k = target / short;
        vf = `scale=${even(width * k)}:${even(height * k)}`;
      }
    }
    return transcodeVideo(ctx, input, info, { vf, quality: q, stage: 'compressing', keepStreams: true });
  },
});
