import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { runFfmpeg } from '../../../engines/ffmpeg/run.js';
import { outputFile } from '../../_shared/output.js';
import { progressSpan } from '../../_shared/progress.js';
import { probeVideo } from '../_shared/video-input.js';

export default defineTool({
  id: 'video-to-webp',
  section: 'video',
  group: 'video',
  summary: 'Turn a video clip into an animated WebP.',
  description: 'The whole clip at the given frame rate and width (the height follows the aspect ratio); loop false plays it once.',
  input: { kind: 'file', accept: ['video/*'] },
  settings: z.object({
    fps: z.int().min(1).max(30).default(12).describe('Frame rate.'),
    width: z.int().min(16).max(1920).default(480).describe('Output width.'),
    quality: z.int().min(1).max(100).default(75).describe('WebP quality.'),
    loop: z.boolean().default(true).describe('Loop the animation.'),
  }),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'animated WebP',
  examples: ['clip.mp4 --width 320 --fps 10 -o clip.webp'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const info = await probeVideo(input, ctx.signal);
    const out = ctx.out('webp');
    await runFfmpeg(
      [
        '-i',
        input.path,
        '-map',
        '0:v:0',
        '-vf',
        `fps=${s.fps}:round=up,scale=${s.width}:-1:flags=lanczos`,
        '-an',
        '-c:v',
        'libwebp_anim',
        '-quality',
        String(s.quality),
        '-lossless',
        '0',
        '-loop',
        s.loop ? '0' : '1',
      ],
      { signal: ctx.signal, durationS: info.duration, onProgress: progressSpan(ctx, 0, 100, 'encoding'), output: out },
    );
    return { outputs: [outputFile(out)] };
  },
});
