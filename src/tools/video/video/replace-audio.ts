import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { audioCodecArgsForVideo, muxArgs, encodeVideoArgs } from '../../../engines/ffmpeg/codecs.js';
import { keepsContainer, videoContainerOf } from '../../../engines/ffmpeg/containers.js';
import { runFfmpeg } from '../../../engines/ffmpeg/run.js';
import { outputFile } from '../../_shared/output.js';
import { progressSpan } from '../../_shared/progress.js';
import { probeAudio } from '../../audio/_shared/audio-input.js';
import { probeVideo } from '../_shared/video-input.js';

export default defineTool({
  id: 'replace-audio',
  section: 'video',
  group: 'video',
  summary: "Swap a video's audio track for an uploaded audio file.",
  description:
    'The video stream is copied; the new audio is encoded to fit the container and cut to the video length (a shorter track leaves silence at the end).',
  input: {
    kind: 'file',
    accept: ['video/*'],
    extra: [
      { field: 'file', flag: 'audio', accept: ['audio/*'], required: true, description: 'Replacement audio track (second file part)' },
    ],
  },
  settings: z.object({}),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'video in the input format',
  examples: ['v.mp4 --audio a.wav -o dubbed.mp4'],
  async run(ctx, { files, extra }) {
    const input = files[0]!;
    const track = extra.file![0]!;
    const info = await probeVideo(input, ctx.signal);
    await probeAudio(track, ctx.signal);
    const copy = keepsContainer(input.type?.ext);
    const container = videoContainerOf(input.type?.ext);
    const out = ctx.out(container);
    const vcodec = copy
      ? ['-c:v', 'copy', ...audioCodecArgsForVideo(container, 192), ...muxArgs(container)]
      : encodeVideoArgs(container, { audio: true });
    await runFfmpeg(
      [
        '-i',
        input.path,
        '-i',
        track.path,
        '-map',
        '0:v:0',
        '-map',
        '1:a:0',
        ...vcodec,
        '-t',
        info.duration.toFixed(6),
        '-map_metadata',
        '0',
      ],
      {
        signal: ctx.signal,
        durationS: info.duration,
        onProgress: progressSpan(ctx, 0, 100, 'muxing'),
        output: out,
      },
    );
    return { outputs: [outputFile(out)] };
  },
});
