import path from 'node:path';
import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { encodeVideoArgs, muxArgs, withEvenSides } from '../../../engines/ffmpeg/codecs.js';
import { videoContainerOf } from '../../../engines/ffmpeg/containers.js';
import { displaySize } from '../../../engines/ffmpeg/probe.js';
import { keptStreams } from '../../../engines/ffmpeg/streams.js';
import { outputFile } from '../../_shared/output.js';
import { reverseInChunks, reverseMemoryBudget } from '../../_shared/reverse-chunks.js';
import { requireMaxDuration } from '../../_shared/time-range.js';
import { retimedChapters } from '../../../engines/ffmpeg/chapters.js';
import { transcodeVideo, withSdr } from '../_shared/transcode-video.js';
import { probeVideo } from '../_shared/video-input.js';

const MAX_S = 5 * 60;
/** Why subtitle tracks are left out: cues cannot be played backwards. */
const REVERSED = 'its cue times would not match the reversed video';

// ffmpeg's reverse filter holds every decoded frame of its input in memory (5 minutes of 1080p is about
// 25 GB), so longer clips are reversed in chunks that fit the budget and joined last-first.

export default defineTool({
  id: 'reverse-video',
  section: 'video',
  group: 'video',
  summary: 'Play a clip (up to 5 minutes) backwards.',
  description:
    'Video and audio are both reversed. Inputs longer than 5 minutes are refused before any work (LIMIT_EXCEEDED). ' +
    'Long or large clips are reversed in chunks of about 512 MB of frames (KILN_REVERSE_MEMORY_MB) and joined in reverse order.',
  input: { kind: 'file', accept: ['video/*'] },
  settings: z.object({}),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'video in the input format',
  examples: ['clip.mp4 -o backwards.mp4'],
  async run(ctx, { files }) {
    const input = files[0]!;
    const info = await probeVideo(input, ctx.signal);
    requireMaxDuration(info, MAX_S, input.name);
    const { width, height } = displaySize(info.video);
    const fps = info.video.fps && info.video.fps < 500 ? info.video.fps : 30;
    const frameBytes = width * height * 1.5;
    const chunkS = Math.max(1, Math.floor(reverseMemoryBudget() / (frameBytes * fps)));
    // The chapters are turned around with the picture (the join's inputs are the chunk list and the original).
    const mirrored = (index: number) => retimedChapters(info, (t) => info.duration - t, ctx.workDir, index);
    if (info.duration <= chunkS) {
      const chapters = await mirrored(1);
      return transcodeVideo(ctx, input, info, {
        vf: 'reverse',
        af: 'areverse',
        extraInputs: chapters.input,
        outArgs: chapters.map,
        stage: 'reversing',
        keepStreams: true,
        subtitlesLeftOut: REVERSED,
      });
    }

    const chapters = await mirrored(2);
    const container = videoContainerOf(input.type?.ext);
    const audio = !!info.audio;
    // Every audio track, each reversed (-af applies to all); subtitles are named as left out.
    const kept = keptStreams(info, container, { subtitlesLeftOut: REVERSED });
    const out = ctx.out(container);
    const chunks = await reverseInChunks(ctx, input, {
      durationS: info.duration,
      chunkS,
      chunkExt: container,
      reverseArgs: [
        '-map',
        '0:v:0',
        ...(audio ? [...kept.args, '-af', 'areverse'] : []),
        '-vf',
        withEvenSides(container, await withSdr(info, 'reverse'))!,
        ...encodeVideoArgs(container, { audio }),
      ],
      // The concat demuxer carries no file's tags: the title and the rest come from the original (input 1).
      joinArgs: [
        ...['-i', path.resolve(input.path), ...chapters.input, '-map', '0', '-c', 'copy'],
        ...['-map_metadata', '1', ...chapters.map, ...muxArgs(container)],
      ],
      output: out,
      reversingPct: 90,
      joinStage: 'joining',
    });
    for (const w of kept.dropped) ctx.warn(w);
    return { outputs: [outputFile(out)], data: { chunks } };
  },
});
