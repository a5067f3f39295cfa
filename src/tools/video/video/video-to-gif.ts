import { z } from 'zod';
import { KilnError } from '../../../core/errors.js';
import { defineTool } from '../../../core/tool.js';
import { toSdrFilters } from '../../../engines/ffmpeg/hdr.js';
import { runFfmpeg } from '../../../engines/ffmpeg/run.js';
import { outputFile } from '../../_shared/output.js';
import { progressSpan } from '../../_shared/progress.js';
import { clipLength } from '../../_shared/time-range.js';
import { probeVideo } from '../_shared/video-input.js';

/** GIFs grow fast; the spec caps the clip. */
const MAX_S = 60;

/** The width when none is asked for; a narrower video keeps its own. */
const DEFAULT_WIDTH = 480;

export default defineTool({
  id: 'video-to-gif',
  section: 'video',
  group: 'video',
  summary: 'Turn a section of a video (max 60 s) into an animated GIF.',
  description:
    'Two-stage palette (palettegen + paletteuse) for clean colours; the height follows the aspect ratio; without width, 480 px, or the width of a narrower video (never enlarged unless asked). The clip is at most 60 s long. HDR video (PQ or HLG) is tone-mapped to SDR colours.',
  input: { kind: 'file', accept: ['video/*'] },
  settings: z.object({
    fps: z.int().min(1).max(30).default(12).describe('GIF frame rate.'),
    // No default in the schema: unset, the width is 480 or the video's own when narrower (never enlarged unless asked).
    width: z.int().min(64).max(1280).optional().meta({ default: DEFAULT_WIDTH }).describe('Output width; height keeps the aspect ratio.'),
    startS: z.number().min(0).default(0).describe('Start time.'),
    // The 60 s cap is the spec's duration limit: documented as the maximum, refused as LIMIT_EXCEEDED (check).
    durationS: z.number().positive().meta({ maximum: MAX_S }).default(5).describe('Clip length.'),
  }),
  check: (s) => {
    if (s.durationS > MAX_S) {
      throw new KilnError('LIMIT_EXCEEDED', `video-to-gif makes GIFs of at most ${MAX_S} s (durationS ${s.durationS}).`, {
        details: [{ path: 'durationS', message: `at most ${MAX_S}` }],
      });
    }
  },
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  execution: 'long',
  output: 'animated GIF',
  examples: ['clip.mp4 --start-s 2 --duration-s 3 --width 320 -o clip.gif'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const info = await probeVideo(input, ctx.signal);
    const dur = clipLength(info, s.startS, { durationS: s.durationS });
    const out = ctx.out('gif');
    // round=up: a clip shorter than one GIF frame (a one-frame video) still gives its frame, not an empty GIF
    // (round=near drops it: 0.04 s is under half of 1/12 s); longer clips get the same frame count.
    const sdr = await toSdrFilters(info.video);
    const graph = `[0:v]${sdr}fps=${s.fps}:round=up,scale=${s.width ?? `'min(${DEFAULT_WIDTH},iw)'`}:-1:flags=lanczos,split[a][b];[a]palettegen=stats_mode=diff[p];[b][p]paletteuse=dither=bayer:bayer_scale=5:diff_mode=rectangle[v]`;
    await runFfmpeg(
      ['-ss', String(s.startS), '-t', dur.toFixed(6), '-i', input.path, '-filter_complex', graph, '-map', '[v]', '-loop', '0'],
      {
        signal: ctx.signal,
        durationS: dur,
        onProgress: progressSpan(ctx, 0, 100, 'encoding'),
        output: out,
      },
    );
    return { outputs: [outputFile(out)] };
  },
});
