import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { encodeVideoArgs, muxArgs } from '../../../engines/ffmpeg/codecs.js';
import { videoContainerOf } from '../../../engines/ffmpeg/containers.js';
import { displaySize } from '../../../engines/ffmpeg/probe.js';
import { runFfmpeg } from '../../../engines/ffmpeg/run.js';
import { outputFile } from '../../_shared/output.js';
import { progressSpan } from '../../_shared/progress.js';
import { requireMaxDuration } from '../../_shared/time-range.js';
import { transcodeVideo } from '../_shared/transcode-video.js';
import { probeVideo } from '../_shared/video-input.js';

const MAX_S = 5 * 60;

/**
 * ffmpeg's reverse filter holds every decoded frame of its input in memory (5 minutes of 1080p is
 * about 25 GB), so longer clips are reversed in chunks that fit this budget and joined last-first.
 */
function memoryBudgetBytes(): number {
  return (Number(process.env.KILN_REVERSE_MEMORY_MB) || 512) * 1024 * 1024;
}

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
    const chunkS = Math.max(1, Math.floor(memoryBudgetBytes() / (frameBytes * fps)));
    if (info.duration <= chunkS) return transcodeVideo(ctx, input, info, { vf: 'reverse', af: 'areverse', stage: 'reversing' });

    const container = videoContainerOf(input.type?.ext);
    const audio = !!info.audio;
    // A sliver left at the end (container padding) joins the last chunk rather than making its own.
    const n = Math.max(1, Math.ceil((info.duration - 0.1) / chunkS));
    const chunks: string[] = [];
    for (let i = 0; i < n; i++) {
      const start = i * chunkS;
      const len = i === n - 1 ? info.duration - start : chunkS;
      const p = path.join(ctx.workDir, `chunk-${String(i).padStart(4, '0')}.${container}`);
      await runFfmpeg(
        [
          '-ss',
          start.toFixed(6),
          '-t',
          len.toFixed(6),
          '-i',
          path.resolve(input.path),
          '-map',
          '0:v:0',
          ...(audio ? ['-map', '0:a:0', '-af', 'areverse'] : []),
          '-vf',
          'reverse',
          ...encodeVideoArgs(container, { audio }),
        ],
        {
          signal: ctx.signal,
          durationS: len,
          onProgress: progressSpan(ctx, (90 * i) / n, (90 * (i + 1)) / n, `reversing ${i + 1}/${n}`),
          output: p,
        },
      );
      chunks.push(p);
    }
    // The last chunk of the input is the first of the output.
    const list = path.join(ctx.workDir, 'chunks.txt');
    await writeFile(
      list,
      chunks
        .reverse()
        .map((c) => `file '${path.basename(c)}'\n`)
        .join(''),
    );
    const out = ctx.out(container);
    await runFfmpeg(['-f', 'concat', '-safe', '0', '-i', list, '-map', '0', '-c', 'copy', ...muxArgs(container)], {
      signal: ctx.signal,
      durationS: info.duration,
      onProgress: progressSpan(ctx, 90, 100, 'joining'),
      output: out,
    });
    return { outputs: [outputFile(out)], data: { chunks: n } };
  },
});
