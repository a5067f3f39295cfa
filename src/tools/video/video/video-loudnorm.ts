import { z } from 'zod';
import { KilnError } from '../../../core/errors.js';
import { defineTool } from '../../../core/tool.js';
import { audioCodecArgsForVideo, muxArgs } from '../../../engines/ffmpeg/codecs.js';
import { keepsContainer, videoContainerOf } from '../../../engines/ffmpeg/containers.js';
import { runFfmpeg } from '../../../engines/ffmpeg/run.js';
import { attachmentMaps } from '../../../engines/ffmpeg/streams.js';
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
    'Two passes: the audio is measured, then normalized with the measured values to -16 LUFS integrated, -1.5 dBTP, LRA 11. ' +
    'Every audio track is normalized on its own. In the input container the video and subtitle streams are copied; another container (.ts, .flv…) is re-encoded to MP4 with every audio track and the subtitles it holds.',
  input: { kind: 'file', accept: ['video/*'] },
  settings: z.object({}),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'video in the input format',
  examples: ['clip.mp4 -o loud.mp4'],
  async run(ctx, { files }) {
    const input = files[0]!;
    const info = await probeVideo(input, ctx.signal);
    await probeAudio(input, ctx.signal);
    const tracks = info.streams.filter((x) => x.type === 'audio');
    const sr = String(info.audio!.sampleRate ?? 48000);
    const same = keepsContainer(input.type?.ext);
    // Every audio track is measured and normalized on its own; one with nothing to measure (a silent
    // commentary track) is kept as it was and named. In another container (a .ts or .flv becomes MP4) every
    // track and the subtitles it holds go through the common re-encode; before, only the first track came out.
    const args: string[] = [];
    for (const [i, t] of tracks.entries()) {
      const span = progressSpan(ctx, (45 * i) / tracks.length, (45 * (i + 1)) / tracks.length, 'measuring');
      const af = await measureLoudnorm(input.path, info.duration, { signal: ctx.signal, onProgress: span, track: i }).catch(
        (e: unknown) => {
          if (i === 0 || !(e instanceof KilnError) || e.code !== 'UNSUPPORTED_INPUT') throw e;
          ctx.warn(`audio track ${i + 1} kept as it was: ${e.message}`);
          return undefined;
        },
      );
      if (af) args.push(`-filter:a:${i}`, af, `-ar:a:${i}`, String(t.sampleRate ?? sr));
      else if (same) args.push(`-c:a:${i}`, 'copy');
    }
    if (!same) return transcodeVideo(ctx, input, info, { keepStreams: true, outArgs: args, progress: [45, 100], stage: 'normalizing' });
    const container = videoContainerOf(input.type?.ext);
    const out = ctx.out(container);
    await runFfmpeg(
      [
        '-i',
        input.path,
        '-map',
        '0:v:0',
        '-map',
        '0:a',
        '-map',
        '0:s?',
        ...attachmentMaps(container),
        '-c:v',
        'copy',
        '-c:s',
        'copy',
        // The encoder for every track first; a track kept as it was overrides it with copy (last match wins).
        ...audioCodecArgsForVideo(container, 192),
        ...args,
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
