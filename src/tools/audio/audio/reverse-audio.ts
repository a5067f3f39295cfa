import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { audioCodecArgs, pcmHolding } from '../../../engines/ffmpeg/codecs.js';
import { audioFormatOf } from '../../../engines/ffmpeg/containers.js';
import { keptCoverArt } from '../../../engines/ffmpeg/streams.js';
import { outputFile } from '../../_shared/output.js';
import { reverseInChunks, reverseMemoryBudget } from '../../_shared/reverse-chunks.js';
import { probeAudio } from '../_shared/audio-input.js';
import { retimedChapters } from '../../../engines/ffmpeg/chapters.js';
import { sourceKbps, transcodeAudio } from '../_shared/transcode-audio.js';

// areverse holds the whole decoded input in memory (float samples: about 1.4 GB per hour of 48 kHz
// stereo), so long files are reversed in chunks, as WAV of the decoded sample depth, joined last-first
// and encoded once, with the input's tags and cover art as the short path keeps them.

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
    const chunkS = Math.max(1, Math.floor(reverseMemoryBudget() / (sr * ch * 4)));
    // The chapters are turned around with the sound (the chunked join's inputs are the chunk list and the original).
    const mirrored = (index: number) => retimedChapters(info, (t) => info.duration - t, ctx.workDir, index);
    if (info.duration <= chunkS) {
      const chapters = await mirrored(1);
      return transcodeAudio(ctx, input, info, { af: 'areverse', extraInputs: chapters.input, outArgs: chapters.map, stage: 'reversing' });
    }
    const chapters = await mirrored(2);
    const format = audioFormatOf(input.type?.ext);
    const out = ctx.out(format);
    // The join's second input is the original: its tags (-map_metadata 1) and cover art (1:N).
    const cover = keptCoverArt(info, format, 1);
    const chunks = await reverseInChunks(ctx, input, {
      durationS: info.duration,
      chunkS,
      chunkExt: 'wav',
      reverseArgs: ['-map', '0:a:0', '-af', 'areverse', '-c:a', pcmHolding(info.audio.sampleFormat)],
      joinArgs: [
        ...['-i', input.path, ...chapters.input, '-map', '0:a:0', ...cover.args],
        ...[
          ...audioCodecArgs(format, await sourceKbps(ctx, input, info, format, info.audio.codec), info.audio.codec),
          '-map_metadata',
          '1',
          ...chapters.map,
        ],
      ],
      output: out,
      reversingPct: 80,
      joinStage: 'encoding',
    });
    for (const w of cover.dropped) ctx.warn(w);
    return { outputs: [outputFile(out)], data: { chunks } };
  },
});
