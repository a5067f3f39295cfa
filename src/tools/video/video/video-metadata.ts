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
  id: 'video-metadata',
  section: 'video',
  group: 'video',
  summary: 'Strip metadata from a video container.',
  description:
    'Removes container and stream tags (title, comment, creation time, location, encoder…), chapters and data tracks (e.g. GPS telemetry). ' +
    'Video, audio and subtitle streams are copied; the display rotation is kept so the video still plays upright.',
  input: { kind: 'file', accept: ['video/*'] },
  settings: z.object({}),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'video in the input format',
  examples: ['phone.mp4 -o clean.mp4'],
  async run(ctx, { files }) {
    const input = files[0]!;
    const info = await probeVideo(input, ctx.signal);
    const strip = ['-map_metadata', '-1', '-map_chapters', '-1', '-fflags', '+bitexact', '-dn'];
    if (!keepsContainer(input.type?.ext)) return transcodeVideo(ctx, input, info, { outArgs: strip, stage: 'cleaning', keepStreams: true });
    const container = videoContainerOf(input.type?.ext);
    const out = ctx.out(container);
    const subs =
      container === 'mkv' || ((container === 'mp4' || container === 'mov') && info.subtitles.every((s) => s.codec === 'mov_text'))
        ? ['-map', '0:s?']
        : [];
    // An MKV's attached fonts stay with its subtitles (their file names and MIME types are kept; they are not metadata about the video).
    const attached = attachmentMaps(container, info);
    await runFfmpeg(
      ['-i', input.path, '-map', '0:v', '-map', '0:a?', ...subs, ...attached, '-c', 'copy', ...strip, ...muxArgs(container)],
      {
        signal: ctx.signal,
        durationS: info.duration,
        onProgress: progressSpan(ctx, 0, 100, 'cleaning'),
        output: out,
      },
    );
    const after = await probeVideo({ ...input, path: out }, ctx.signal);
    return {
      outputs: [outputFile(out)],
      data: { removedTags: Object.keys(info.tags).filter((k) => !(k in after.tags)), remainingTags: after.tags },
    };
  },
});
