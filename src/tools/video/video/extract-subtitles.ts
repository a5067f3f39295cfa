import { z } from 'zod';
import { KilnError } from '../../../core/errors.js';
import { defineTool } from '../../../core/tool.js';
import { probe } from '../../../engines/ffmpeg/probe.js';
import { runFfmpeg } from '../../../engines/ffmpeg/run.js';
import { outputFile } from '../../_shared/output.js';
import { progressSpan } from '../../_shared/progress.js';

/** Picture-based subtitle codecs: there is no text to write as SRT. */
const BITMAP = new Set(['dvd_subtitle', 'hdmv_pgs_subtitle', 'dvb_subtitle', 'xsub']);

export default defineTool({
  id: 'extract-subtitles',
  section: 'video',
  group: 'video',
  summary: 'Export the first subtitle track of a video as SRT.',
  description: 'Text tracks (mov_text, SRT, ASS, WebVTT) only; picture-based tracks (DVD, Blu-ray PGS) have no text and are refused.',
  input: { kind: 'file', accept: ['video/*'] },
  settings: z.object({}),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'SRT subtitle file',
  examples: ['movie.mkv -o movie.srt'],
  async run(ctx, { files }) {
    const input = files[0]!;
    const info = await probe(input.path, { signal: ctx.signal, name: input.name });
    const sub = info.subtitles[0];
    if (!sub) throw new KilnError('UNSUPPORTED_INPUT', `${input.name} has no subtitle track.`, { reason: 'no-subtitle-stream' });
    if (BITMAP.has(sub.codec))
      throw new KilnError(
        'UNSUPPORTED_INPUT',
        `The subtitle track of ${input.name} is picture-based (${sub.codec}); it has no text to export.`,
      );
    const out = ctx.out('srt');
    await runFfmpeg(['-i', input.path, '-map', `0:${sub.index}`, '-c:s', 'srt', '-f', 'srt'], {
      signal: ctx.signal,
      durationS: info.duration,
      onProgress: progressSpan(ctx, 0, 100, 'extracting'),
      output: out,
      allowEmpty: true,
    });
    return { outputs: [outputFile(out)], data: { codec: sub.codec, language: sub.language ?? null } };
  },
});
