import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { audioCodecArgs } from '../../../engines/ffmpeg/codecs.js';
import { audioFormatOf } from '../../../engines/ffmpeg/containers.js';
import { runFfmpeg } from '../../../engines/ffmpeg/run.js';
import { outputFile } from '../../_shared/output.js';
import { progressSpan } from '../../_shared/progress.js';
import { probeAudio } from '../_shared/audio-input.js';
import { transcodeAudio } from '../_shared/transcode-audio.js';

/**
 * areverse holds the whole decoded input in memory (float samples: about 1.4 GB per hour of 48 kHz
 * stereo), so long files are reversed in chunks within this budget, as 16-bit WAV, joined last-first
 * and encoded once.
 */
function memoryBudgetBytes(): number {
  return (Number(process.env.KILN_REVERSE_MEMORY_MB) || 512) * 1024 * 1024;
}

export default defineTool({
  id: 'reverse-audio',
  section: 'audio',
  group: 'audio',
  summary: 'Reverse an audio file.',
  description:
    'Plays the audio backwards. Long files are reversed in chunks of about 512 MB of samples (KILN_REVERSE_MEMORY_MB) and joined in reverse order.',
  input: { kind: 'file', accept: ['audio/*'] },
  settings: z.object({}),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'audio in the input format',
  examples: ['song.mp3 -o backwards.mp3'],
  async run(ctx, { files }) {
    const input = files[0]!;
    const info = await probeAudio(input, ctx.signal);
    const sr = info.audio.sampleRate ?? 48000;
    const ch = info.audio.channels ?? 2;
    const chunkS = Math.max(1, Math.floor(memoryBudgetBytes() / (sr * ch * 4)));
    if (info.duration <= chunkS) return transcodeAudio(ctx, input, info, { af: 'areverse', stage: 'reversing' });

    // A sliver left at the end (container padding) joins the last chunk rather than making its own.
    const n = Math.max(1, Math.ceil((info.duration - 0.1) / chunkS));
    const chunks: string[] = [];
    for (let i = 0; i < n; i++) {
      const start = i * chunkS;
      const len = i === n - 1 ? info.duration - start : chunkS;
      const p = path.join(ctx.workDir, `chunk-${String(i).padStart(4, '0')}.wav`);
      await runFfmpeg(
        [
          '-ss',
          start.toFixed(6),
          '-t',
          len.toFixed(6),
          '-i',
          path.resolve(input.path),
          '-map',
          '0:a:0',
          '-af',
          'areverse',
          '-c:a',
          'pcm_s16le',
        ],
        {
          signal: ctx.signal,
          durationS: len,
          onProgress: progressSpan(ctx, (80 * i) / n, (80 * (i + 1)) / n, `reversing ${i + 1}/${n}`),
          output: p,
        },
      );
      chunks.push(p);
    }
    const list = path.join(ctx.workDir, 'chunks.txt');
    await writeFile(
      list,
      chunks
        .reverse()
        .map((c) => `file '${path.basename(c)}'\n`)
        .join(''),
    );
    const format = audioFormatOf(input.type?.ext);
    const out = ctx.out(format);
    await runFfmpeg(['-f', 'concat', '-safe', '0', '-i', list, '-map', '0:a:0', ...audioCodecArgs(format, 192)], {
      signal: ctx.signal,
      durationS: info.duration,
      onProgress: progressSpan(ctx, 80, 100, 'encoding'),
      output: out,
    });
    return { outputs: [outputFile(out)], data: { chunks: n } };
  },
});
