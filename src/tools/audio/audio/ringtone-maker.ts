import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { audioCodecArgs } from '../../../engines/ffmpeg/codecs.js';
import { runFfmpeg } from '../../../engines/ffmpeg/run.js';
import { keptCoverArt } from '../../../engines/ffmpeg/streams.js';
import { outputFile } from '../../_shared/output.js';
import { progressSpan } from '../../_shared/progress.js';
import { clipLength } from '../../_shared/time-range.js';
import { probeAudio } from '../_shared/audio-input.js';

export default defineTool({
  id: 'ringtone-maker',
  section: 'audio',
  group: 'audio',
  summary: 'Cut a clip of up to 30 s as a ringtone.',
  description:
    'An iPhone ringtone: AAC 192 kbit/s in an M4R (MPEG-4 audio) file, durationS long from startS. More than two channels (5.1) are downmixed to stereo; tags and cover art are kept.',
  input: { kind: 'file', accept: ['audio/*'] },
  settings: z.object({
    startS: z.number().min(0).default(0).describe('Clip start.'),
    durationS: z.number().min(1).max(30).default(30).describe('Clip length.'),
  }),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'ringtone (M4R, AAC)',
  examples: ['song.mp3 --start-s 45 --duration-s 20 -o song.m4r'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const info = await probeAudio(input, ctx.signal);
    const dur = clipLength(info, s.startS, { durationS: s.durationS });
    const out = ctx.out('m4r');
    // A phone plays a ringtone in stereo at most: 5.1 or 7.1 sound is downmixed (ffmpeg's standard matrix).
    const channels = info.audio.channels ?? 0;
    const stereo = channels > 2 ? ['-ac', '2'] : [];
    const cover = keptCoverArt(info, 'm4r');
    await runFfmpeg(
      [
        '-ss',
        String(s.startS),
        '-i',
        input.path,
        '-t',
        dur.toFixed(6),
        '-map',
        '0:a:0',
        ...cover.args,
        ...stereo,
        ...audioCodecArgs('m4r', 192),
      ],
      {
        signal: ctx.signal,
        durationS: dur,
        onProgress: progressSpan(ctx, 0, 100, 'encoding'),
        output: out,
        requireSamples: true,
      },
    );
    if (stereo.length) ctx.warn(`${channels} audio channels downmixed to stereo: a ringtone is stereo at most`);
    for (const w of cover.dropped) ctx.warn(w);
    return { outputs: [outputFile(out)], data: { startS: s.startS, durationS: Number(dur.toFixed(3)) } };
  },
});
