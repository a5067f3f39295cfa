import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { audioCodecArgsForVideo, muxArgs } from '../../../engines/ffmpeg/codecs.js';
import { keepsContainer, videoContainerOf } from '../../../engines/ffmpeg/containers.js';
import { runFfmpeg } from '../../../engines/ffmpeg/run.js';
import { outputFile } from '../../_shared/output.js';
import { progressSpan } from '../../_shared/progress.js';
import { probeAudio } from '../../audio/_shared/audio-input.js';
import { measureLoudnorm } from '../../audio/_shared/loudness.js';
import { transcodeVideo } from '../_shared/transcode-video.js';
import { probeVideo } from '../_shared/video-input.js';

export default defineTool({
  id: 'video-loudnorm',
  section: 'video',
  group: 'video',
  summary: "Normalize a video's audio loudness (EBU R128).",
  description:
    'Two passes: the audio is measured, then normalized with the measured values to -16 LUFS integrated, -1.5 dBTP, LRA 11. The video stream is copied.',
  input: { kind: 'file', accept: ['video/*'] },
  settings: z.object({}),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'video in the input format',
  examples: ['clip.mp4 -o loud.mp4'],
  async run(ctx, { files }) {
    const input = files[0]!;
    const info = await probeVideo(input, ctx.signal);
    await probeAudio(input, ctx.signal);
    const sr = String(info.audio!.sampleRate ?? 48000);
    const af = await measureLoudnorm(input.path, info.duration, { signal: ctx.signal, onProgress: progressSpan(ctx, 0, 45, 'measuring') });
    if (!keepsContainer(input.type?.ext))
      return transcodeVideo(ctx, input, info, { af, outArgs: ['-ar', sr], progress: [45, 100], stage: 'normalizing' });
    const container = videoContainerOf(input.type?.ext);
    const out = ctx.out(container);
    await runFfmpeg(
      [
        '-i',
        input.path,
        '-map',
        '0:v:0',
        '-map',
        '0:a:0',
        '-c:v',
        'copy',
        '-af',
        af,
        ...audioCodecArgsForVideo(container, 192),
        '-ar',
        sr,
        '-map_metadata',
        '0',
        ...muxArgs(container),
      ],
      {
        signal: ctx.signal,
        durationS: info.duration,
        onProgress: progressSpan(ctx, 45, 100, 'normalizing'),
        output: out,
      },
    );
    return { outputs: [outputFile(out)] };
  },
});
