import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { outputFile, probeVideo, progressSpan, requireStartInside, runFfmpeg } from '../../../engines/ffmpeg.js';

export default defineTool({
  id: 'video-to-gif',
  section: 'video',
  group: 'video',
  summary: 'Turn a section of a video (max 60 s) into an animated GIF.',
  description: 'Two-stage palette (palettegen + paletteuse) for clean colours; the height follows the aspect ratio. The clip is at most 60 s long.',
  input: { kind: 'file', accept: ['video/*'] },
  settings: z.object({
    fps: z.int().min(1).max(30).default(12).describe('GIF frame rate.'),
    width: z.int().min(64).max(1280).default(480).describe('Output width; height keeps the aspect ratio.'),
    startS: z.number().min(0).default(0).describe('Start time.'),
    durationS: z.number().positive().max(60).default(5).describe('Clip length.'),
  }),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  execution: 'long',
  output: 'animated GIF',
  examples: ['clip.mp4 --start-s 2 --duration-s 3 --width 320 -o clip.gif'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const info = await probeVideo(input, ctx.signal);
    requireStartInside(info, s.startS);
    const dur = Math.min(s.durationS, (info.duration || s.startS + s.durationS) - s.startS);
    const out = ctx.out('gif');
    const graph = `[0:v]fps=${s.fps},scale=${s.width}:-1:flags=lanczos,split[a][b];[a]palettegen=stats_mode=diff[p];[b][p]paletteuse=dither=bayer:bayer_scale=5:diff_mode=rectangle[v]`;
    await runFfmpeg(['-ss', String(s.startS), '-t', dur.toFixed(6), '-i', input.path, '-filter_complex', graph, '-map', '[v]', '-loop', '0'], {
      signal: ctx.signal,
      durationS: dur,
      onProgress: progressSpan(ctx, 0, 100, 'encoding'),
      output: out,
    });
    return { outputs: [outputFile(out)] };
  },
});
