import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { transcodeVideo } from '../_shared/transcode-video.js';
import path from 'node:path';
import { frameDurations } from '../../../engines/ffmpeg/probe.js';
import { probeVideo } from '../_shared/video-input.js';

export default defineTool({
  id: 'gif-to-video',
  section: 'video',
  group: 'video',
  summary: 'Convert an animated GIF to MP4, WebM or MOV.',
  description:
    "Each frame is shown for its own delay (constant frame rate of 100 / the delays' common divisor in centiseconds, at most 50 fps). H.264 for MP4 and MOV, VP9 for WebM; odd GIF sizes are trimmed by one pixel to the even size those codecs need (a GIF one pixel wide or high becomes WebM only). Transparency becomes black.",
  input: { kind: 'file', accept: ['.gif'] },
  settings: z.object({
    format: z.enum(['mp4', 'webm', 'mov']).default('mp4').describe('Output container.'),
  }),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'video (MP4, WebM or MOV)',
  examples: ['anim.gif -o anim.mp4', 'anim.gif --format webm -o anim.webm'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const [info, delays] = await Promise.all([
      probeVideo(input, ctx.signal),
      frameDurations(path.resolve(input.path), { signal: ctx.signal }),
    ]);
    return transcodeVideo(ctx, input, info, {
      container: s.format,
      audio: false,
      // The even sides MP4 and MOV need come from transcodeVideo's crop (a 1x1 GIF is refused there);
      // WebM takes any size, a 1x1 GIF too. The fps filter shows each frame for its own delay, the last too.
      vf: `setsar=1,fps=${gifFrameRate(delays)}`,
      stage: 'converting',
    });
  },
});

/**
 * A constant frame rate that shows every GIF frame for its own delay. GIF delays are centiseconds and may
 * differ frame by frame (a long hold on the last one is common): without a rate of their own, the encoder
 * took ffmpeg's guess (10 fps for delays of 5, 20 and 70 cs), shifted the frames and showed the last one for
 * one tick, so a 0.95 s GIF became a 0.4 s video. The rate is 100 / the delays' greatest common divisor,
 * at most 50 fps: browsers show no delay under 2 cs.
 */
export function gifFrameRate(delaysS: number[]): string {
  const cs = delaysS.map((d) => Math.round(d * 100)).filter((d) => d > 0);
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  const step = Math.max(2, cs.reduce(gcd, 0) || 10);
  return `100/${step}`;
}
