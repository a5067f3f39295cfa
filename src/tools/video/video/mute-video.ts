import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { muxArgs } from '../../../engines/ffmpeg/codecs.js';
import { keepsContainer, videoContainerOf } from '../../../engines/ffmpeg/containers.js';
import { runFfmpeg } from '../../../engines/ffmpeg/run.js';
import { attachmentMaps } from '../../../engines/ffmpeg/streams.js';
import { outputFile } from '../../_shared/output.js';
import { progressSpan } from '../../_shared/progress.js';
import { transcodeVideo } from '../_shared/transcode-video.js';
import { probeVideo } from '../_shared/video-input.js';

export default defineTool({
  id: 'mute-video',
  section: 'video',
  group: 'video',
  summary: 'Remove the audio track from a video.',
  description: 'The video stream and subtitle tracks are copied untouched (no quality loss) when the container is kept.',
  input: { kind: 'file', accept: ['video/*'] },
  settings: z.object({}),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'video in the input format, without audio',
  examples: ['clip.mp4 -o silent.mp4'],
  async run(ctx, { files }) {
    const input = files[0]!;
    const info = await probeVideo(input, ctx.signal);
    if (!keepsContainer(input.type?.ext)) return transcodeVideo(ctx, input, info, { audio: false });
    const container = videoContainerOf(input.type?.ext);
    const out = ctx.out(container);
    // Only the sound goes: subtitle tracks and an MKV's attached fonts are copied (the container is the input's own, so it holds them).
    const args = [
      '-i',
      input.path,
      '-map',
      '0:v:0',
      '-map',
      '0:s?',
      ...attachmentMaps(container),
      '-c:v',
      'copy',
      '-c:s',
      'copy',
      '-an',
      '-map_metadata',
      '0',
    ];
    await runFfmpeg([...args, ...muxArgs(container)], {
      signal: ctx.signal,
      durationS: info.duration,
      onProgress: progressSpan(ctx, 0, 100, 'muting'),
      output: out,
    });
    return { outputs: [outputFile(out)] };
  },
});
