import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { audioCodecArgs } from '../../../engines/ffmpeg/codecs.js';
import { runFfmpeg } from '../../../engines/ffmpeg/run.js';
import { outputFile } from '../../_shared/output.js';
import { progressSpan } from '../../_shared/progress.js';
import { probeAudio } from '../_shared/audio-input.js';
import { sourceKbps } from '../_shared/transcode-audio.js';

export default defineTool({
  id: 'merge-audio',
  section: 'audio',
  group: 'audio',
  summary: 'Concatenate several audio files into one track.',
  description:
    "Files are joined in the order given, resampled to the first file's sample rate and channel layout (mono or stereo). " +
    'MP3 and M4A are encoded at about the bitrate of the richest input (192 kbit/s from lossless ones).',
  input: { kind: 'files', accept: ['audio/*'], min: 2, max: 10 },
  settings: z.object({
    format: z.enum(['mp3', 'wav', 'flac', 'm4a']).default('mp3').describe('Output format.'),
  }),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'audio (MP3, WAV, FLAC or M4A)',
  examples: ['intro.mp3 talk.wav outro.mp3 -o episode.mp3'],
  async run(ctx, { files }, s) {
    const infos = [];
    for (const f of files) infos.push(await probeAudio(f, ctx.signal));
    const sr = infos[0]!.audio.sampleRate ?? 44100;
    const layout = (infos[0]!.audio.channels ?? 2) === 1 ? 'mono' : 'stereo';
    const graph =
      infos
        .map((_, i) => `[${i}:a:0]aresample=${sr},aformat=sample_fmts=fltp:channel_layouts=${layout},asetpts=PTS-STARTPTS[a${i}]`)
        .join(';') +
      ';' +
      infos.map((_, i) => `[a${i}]`).join('') +
      `concat=n=${infos.length}:v=0:a=1[a]`;
    // Lossy output at about the richest input's bitrate (a 64 kbit/s voice note joined to another stays near 64).
    let kbps = 0;
    for (let i = 0; i < files.length; i++) kbps = Math.max(kbps, await sourceKbps(ctx, files[i]!, infos[i]!, s.format));
    const out = ctx.out(s.format);
    const total = infos.reduce((a, i) => a + i.duration, 0);
    await runFfmpeg([...files.flatMap((f) => ['-i', f.path]), '-filter_complex', graph, '-map', '[a]', ...audioCodecArgs(s.format, kbps)], {
      signal: ctx.signal,
      durationS: total,
      onProgress: progressSpan(ctx, 0, 100, 'merging'),
      output: out,
      requireSamples: true,
    });
    return { outputs: [outputFile(out)], data: { files: files.length, durationS: Number(total.toFixed(3)) } };
  },
});
