import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { encodeVideoArgs, muxArgs, withEvenSides } from '../../../engines/ffmpeg/codecs.js';
import { keepsContainer, videoContainerOf } from '../../../engines/ffmpeg/containers.js';
import { runFfmpeg } from '../../../engines/ffmpeg/run.js';
import { keptStreams } from '../../../engines/ffmpeg/streams.js';
import { outputFile } from '../../_shared/output.js';
import { progressSpan } from '../../_shared/progress.js';
import { checkRange, clipLength } from '../../_shared/time-range.js';
import { refuseTooThinFor, withSdr } from '../_shared/transcode-video.js';
import { probeVideo } from '../_shared/video-input.js';

export default defineTool({
  id: 'trim-video',
  section: 'video',
  group: 'video',
  summary: 'Cut a clip between two timestamps, by keyframe or frame-accurately.',
  description:
    'Without precise the streams are copied and the cut starts at the keyframe at or before startS (fast, no quality loss, may start a little early). ' +
    'With precise the clip is re-encoded and starts on the exact frame. endS beyond the end keeps the rest of the video.',
  input: { kind: 'file', accept: ['video/*'] },
  settings: z.object({
    startS: z.number().min(0).default(0).describe('Start time.'),
    endS: z.number().describe('End time; must be after startS.'),
    precise: z.boolean().default(false).describe('Re-encode for a frame-accurate cut instead of keyframe seeking.'),
  }),
  check: checkRange,
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'video in the input format',
  examples: ['clip.mp4 --start-s 0.5 --end-s 1.5 -o t.mp4', 'clip.mp4 --start-s 10 --end-s 20 --precise -o exact.mp4'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const info = await probeVideo(input, ctx.signal);
    const dur = clipLength(info, s.startS, { endS: s.endS });
    const container = videoContainerOf(input.type?.ext);
    const out = ctx.out(container);
    const copy = !s.precise && keepsContainer(input.type?.ext);
    if (!copy) refuseTooThinFor(input, info, container);
    const audio = !!info.audio;
    // Every audio track and the subtitle tracks the container holds (after the codecs: their -c:s:N win).
    const kept = keptStreams(info, container);
    const vf = copy ? undefined : withEvenSides(container, await withSdr(info));
    const codec = copy
      ? ['-c', 'copy', '-avoid_negative_ts', 'make_zero', ...muxArgs(container)]
      : [...(vf ? ['-vf', vf] : []), ...encodeVideoArgs(container, { audio })];
    // -ss before -i: a fast seek; when re-encoding ffmpeg still decodes from the keyframe and drops frames up to startS exactly.
    await runFfmpeg(
      ['-ss', String(s.startS), '-i', input.path, '-t', dur.toFixed(6), '-map', '0:v:0', ...codec, ...kept.args, '-map_metadata', '0'],
      {
        signal: ctx.signal,
        durationS: dur,
        onProgress: progressSpan(ctx, 0, 100, 'trimming'),
        output: out,
        // A start after the last frame starts (1.99 s of a 2 s clip at 25 fps, or where only the sound goes
        // on) keeps no frame: an audio-only "video" with exit 0 before; now the clear empty-output refusal.
        requireFrames: true,
      },
    );
    for (const w of kept.dropped) ctx.warn(w);
    return {
      outputs: [outputFile(out)],
      data: { startS: s.startS, endS: s.startS + dur, precise: !copy },
    };
  },
});
