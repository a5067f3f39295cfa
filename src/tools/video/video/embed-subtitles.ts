import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { muxArgs } from '../../../engines/ffmpeg/codecs.js';
import type { VideoContainer } from '../../../engines/ffmpeg/containers.js';
import { runFfmpeg } from '../../../engines/ffmpeg/run.js';
import { keptStreams } from '../../../engines/ffmpeg/streams.js';
import { outputFile } from '../../_shared/output.js';
import { progressSpan } from '../../_shared/progress.js';
import { prepareSubtitles } from '../_shared/subtitle-file.js';
import { VIDEO_AND_SUBTITLES } from '../_shared/subtitle-input.js';
import { probeVideo } from '../_shared/video-input.js';

/** Subtitle codec per container; AVI holds no text subtitles, so it becomes MKV (streams copied). */
const TARGET: Record<string, { container: VideoContainer; codec: string }> = {
  mp4: { container: 'mp4', codec: 'mov_text' },
  mov: { container: 'mov', codec: 'mov_text' },
  webm: { container: 'webm', codec: 'webvtt' },
  mkv: { container: 'mkv', codec: 'srt' },
};

export default defineTool({
  id: 'embed-subtitles',
  section: 'video',
  group: 'video',
  summary: 'Mux a subtitle file into the video as a switchable track.',
  description:
    'Streams are copied; the subtitles become a soft track tagged with the language: mov_text in MP4/MOV, SRT in MKV, WebVTT in WebM. Other containers become MKV. ' +
    'A subtitle file that is not UTF-8 is read as Windows-1252; SRT/WebVTT cues that end before they start are left out, named in the warnings.',
  input: VIDEO_AND_SUBTITLES,
  settings: z.object({
    language: z
      .string()
      .regex(/^[a-z]{3}$/, 'expected an ISO 639-2/B code such as eng')
      .default('eng')
      .describe('ISO 639-2/B language code of the track.'),
  }),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'video in the input format (MKV for other containers)',
  examples: ['clip.mp4 --subtitles clip.srt --language deu -o soft.mp4'],
  async run(ctx, { files, extra }, s) {
    const input = files[0]!;
    const subs = extra.file![0]!;
    const info = await probeVideo(input, ctx.signal);
    const prepared = await prepareSubtitles(subs, ctx.workDir, (m) => ctx.warn(m));
    const t = TARGET[input.type?.ext ?? ''] ?? TARGET.mkv!;
    const out = ctx.out(t.container);
    // Every audio track and the subtitle tracks already there (those the container holds); the new track comes last.
    const kept = keptStreams(info, t.container);
    const n = kept.args.filter((a) => a.startsWith('-c:s:')).length;
    await runFfmpeg(
      [
        '-i',
        input.path,
        '-i',
        prepared,
        '-map',
        '0:v:0',
        '-c:v',
        'copy',
        '-c:a',
        'copy',
        ...kept.args,
        '-map',
        '1:0',
        `-c:s:${n}`,
        t.codec,
        `-metadata:s:s:${n}`,
        `language=${s.language}`,
        '-map_metadata',
        '0',
        ...muxArgs(t.container),
      ],
      { signal: ctx.signal, durationS: info.duration, onProgress: progressSpan(ctx, 0, 100, 'muxing'), output: out },
    );
    for (const w of kept.dropped) ctx.warn(w);
    return { outputs: [outputFile(out)] };
  },
});
