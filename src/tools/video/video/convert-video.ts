import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { QUALITY } from '../../../engines/ffmpeg/codecs.js';
import { transcodeVideo } from '../_shared/transcode-video.js';
import { probeVideo } from '../_shared/video-input.js';

export default defineTool({
  id: 'convert-video',
  section: 'video',
  group: 'video',
  summary: 'Convert a video to MP4, MOV, WebM, AVI or MKV at a quality preset; base tool of the video presets.',
  description:
    'Codecs follow the container: MP4, MOV and MKV get H.264/AAC (MP4 and MOV with faststart), WebM gets VP9/Opus, AVI gets MPEG-4 Part 2/MP3. ' +
    'quality high/balanced/small = H.264 CRF 18/23/28, VP9 CRF 24/32/40, MPEG-4 q 2/4/8; audio 192/128/96 kbit/s. ' +
    'Every audio track is kept, and every subtitle track the container holds (text ones as mov_text in MP4/MOV, WebVTT in WebM, SRT in MKV); the tracks left out (any in AVI, picture subtitles outside MKV) are named in warnings.',
  input: { kind: 'file', accept: ['video/*'] },
  settings: z.object({
    format: z.enum(['mp4', 'mov', 'webm', 'avi', 'mkv']).default('mp4').describe('Output container.'),
    quality: z.enum(['high', 'balanced', 'small']).default('balanced').describe('Quality/size preset.'),
  }),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  execution: 'long',
  output: 'video (MP4, MOV, WebM, AVI or MKV)',
  examples: ['clip.mov --format mp4 -o clip.mp4', 'clip.mp4 --format webm --quality small -o clip.webm'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    // Not awaited: the probe runs while ffmpeg starts (transcodeVideo), and its refusal still wins.
    return transcodeVideo(ctx, input, probeVideo(input, ctx.signal), {
      container: s.format,
      quality: QUALITY[s.quality],
      stage: 'converting',
      keepStreams: true,
    });
  },
});
