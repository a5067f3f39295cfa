import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { toSdrFilters } from '../../../engines/ffmpeg/hdr.js';
import { runFfmpeg } from '../../../engines/ffmpeg/run.js';
import { outputFile } from '../../_shared/output.js';
import { progressSpan } from '../../_shared/progress.js';
import { probeVideo } from '../_shared/video-input.js';

/** The width when none is asked for; a narrower video keeps its own. */
const DEFAULT_WIDTH = 480;

export default defineTool({
  id: 'video-to-webp',
  section: 'video',
  group: 'video',
  summary: 'Turn a video clip into an animated WebP.',
  description:
    'The whole clip at the given frame rate and width (the height follows the aspect ratio; without width, 480 px, or the width of a narrower video, never enlarged unless asked); loop false plays it once. HDR video (PQ or HLG) is tone-mapped to SDR colours.',
  input: { kind: 'file', accept: ['video/*'] },
  settings: z.object({
    fps: z.int().min(1).max(30).default(12).describe('Frame rate.'),
    // No default in the schema: unset, the width is 480 or the video's own when narrower (never enlarged unless asked).
    width: z.int().min(16).max(1920).optional().meta({ default: DEFAULT_WIDTH }).describe('Output width.'),
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
        `${await toSdrFilters(info.video)}fps=${s.fps}:round=up,scale=${s.width ?? `'min(${DEFAULT_WIDTH},iw)'`}:-1:flags=lanczos`,
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
