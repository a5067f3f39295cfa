import path from 'node:path';
import { z } from 'zod';
import { KilnError } from '../../../core/errors.js';
import { defineTool } from '../../../core/tool.js';
import { ffmpegCapabilities } from '../../../engines/ffmpeg/capabilities.js';
import { displaySize } from '../../../engines/ffmpeg/probe.js';
import { transcodeVideo } from '../_shared/transcode-video.js';
import { prepareSubtitles } from '../_shared/subtitle-file.js';
import { VIDEO_AND_SUBTITLES } from '../_shared/subtitle-input.js';
import { probeVideo } from '../_shared/video-input.js';

/** libass scales SRT styles from a 288-line script to the frame height. */
const ASS_PLAY_RES_Y = 288;

export default defineTool({
  id: 'burn-subtitles',
  section: 'video',
  group: 'video',
  summary: 'Render a subtitle file permanently into the video frames.',
  description:
    'SRT, VTT, ASS or SSA rendered with libass (the subtitles filter); fontSize is in pixels of the output frame and overrides the file’s own size. ' +
    'A subtitle file that is not UTF-8 is read as Windows-1252; SRT/WebVTT cues that end before they start are left out, named in the warnings.',
  input: VIDEO_AND_SUBTITLES,
  settings: z.object({
    fontSize: z.int().min(8).max(72).default(24).describe('Subtitle font size.'),
  }),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  execution: 'long',
  output: 'video in the input format',
  examples: ['clip.mp4 --subtitles clip.srt --font-size 32 -o hardsub.mp4'],
  async run(ctx, { files, extra }, s) {
    if (!(await ffmpegCapabilities()).libass)
      throw new KilnError('ENGINE_MISSING', 'This ffmpeg build lacks libass (the subtitles filter).');
    const input = files[0]!;
    const subs = extra.file![0]!;
    const info = await probeVideo(input, ctx.signal);
    // A fixed name in cwd=workDir: file names inside a filter graph would need two levels of escaping.
    const name = path.basename(await prepareSubtitles(subs, ctx.workDir, (m) => ctx.warn(m)));
    const { height } = displaySize(info.video);
    const size = Math.max(1, Math.round((s.fontSize * ASS_PLAY_RES_Y) / height));
    const vf = `subtitles=${name}:force_style='FontSize=${size}'`;
    return transcodeVideo(ctx, input, info, { vf, cwd: ctx.workDir, stage: 'burning subtitles', keepStreams: true });
  },
});
