import path from 'node:path';
import { z } from 'zod';
import { KilnError } from '../../../core/errors.js';
import { defineTool, type OutputFile } from '../../../core/tool.js';
import { audioCodecArgs } from '../../../engines/ffmpeg/codecs.js';
import { audioFormatOf } from '../../../engines/ffmpeg/containers.js';
import { runFfmpeg } from '../../../engines/ffmpeg/run.js';
import { keptCoverArt } from '../../../engines/ffmpeg/streams.js';
import { outputFile } from '../../_shared/output.js';
import { progressSpan } from '../../_shared/progress.js';
import { probeAudioLength } from '../_shared/audio-input.js';
import { detectSilences } from '../_shared/silence.js';
import { sourceKbps } from '../_shared/transcode-audio.js';

/** More pieces than this is almost certainly a wrong setting (and one ffmpeg run each). */
const MAX_SEGMENTS = 1000;
/** Pieces shorter than this (a click between two silences) are merged into their neighbour. */
const MIN_PIECE_S = 0.1;

export default defineTool({
  id: 'split-audio',
  section: 'audio',
  group: 'audio',
  summary: 'Split audio by fixed length, into equal parts, or at silences.',
  description:
    'time: pieces of segmentS (the last may be shorter); parts: that many equal pieces; silence: cut in the middle of every silence quieter than thresholdDb lasting minSilenceS. ' +
    'Pieces are named part-000, part-001, … in the input format.',
  input: { kind: 'file', accept: ['audio/*'] },
  settings: z.object({
    mode: z.enum(['time', 'parts', 'silence']).default('time').describe('Split strategy.'),
    segmentS: z.number().min(1).max(3600).default(60).describe('Segment length.'),
    parts: z.int().min(2).max(20).default(2).describe('Number of equal parts.'),
    thresholdDb: z.number().min(-80).max(-20).default(-40).describe('Silence threshold.'),
    minSilenceS: z.number().min(0.1).max(10).default(0.3).describe('Minimum silence gap.'),
  }),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'ZIP of segments (part-000, part-001, …)',
  examples: ['podcast.mp3 --mode time --segment-s 600 -o parts.zip', 'album.wav --mode silence --threshold-db -50 -o tracks.zip'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const info = await probeAudioLength(ctx, input);
    const D = info.duration;
    if (!(D > 0)) throw new KilnError('UNSUPPORTED_INPUT', `The length of ${input.name} is unknown, so it cannot be split.`);
    let cuts: number[] = [];
    if (s.mode === 'time') {
      if (D / s.segmentS > MAX_SEGMENTS)
        throw new KilnError('LIMIT_EXCEEDED', `That would make ${Math.ceil(D / s.segmentS)} pieces; the limit is ${MAX_SEGMENTS}.`);
      for (let t = s.segmentS; t < D - 1e-3; t += s.segmentS) cuts.push(t);
    } else if (s.mode === 'parts') {
      for (let i = 1; i < s.parts; i++) cuts.push((D * i) / s.parts);
    } else {
      const silences = await detectSilences(input.path, D, s.thresholdDb, s.minSilenceS, {
        signal: ctx.signal,
        onProgress: progressSpan(ctx, 0, 30, 'finding silences'),
      });
      // Leading and trailing silences are not cuts.
      cuts = silences.filter((x) => x.start > 0.01 && x.end < D - 0.01).map((x) => (x.start + x.end) / 2);
    }
    const bounds = [0, ...cuts, D].filter((t, i, a) => i === 0 || t - a[i - 1]! >= MIN_PIECE_S || i === a.length - 1);
    if (bounds.length > 2 && bounds[bounds.length - 1]! - bounds[bounds.length - 2]! < MIN_PIECE_S) bounds.splice(bounds.length - 2, 1);
    const format = audioFormatOf(input.type?.ext);
    // Every piece keeps the tags and the cover art (where the format holds it), as the other audio tools do.
    const cover = keptCoverArt(info, format);
    const kbps = await sourceKbps(ctx, input, info, format, info.audio.codec);
    const outputs: OutputFile[] = [];
    const from = s.mode === 'silence' ? 30 : 0;
    for (let i = 0; i < bounds.length - 1; i++) {
      const a = bounds[i]!;
      const len = bounds[i + 1]! - a;
      const p = path.join(ctx.workDir, `part-${String(i).padStart(3, '0')}.${format}`);
      await runFfmpeg(
        [
          '-ss',
          a.toFixed(6),
          '-i',
          input.path,
          '-t',
          len.toFixed(6),
          '-map',
          '0:a:0',
          ...cover.args,
          ...audioCodecArgs(format, kbps, info.audio.codec),
          '-map_metadata',
          '0',
        ],
        {
          signal: ctx.signal,
          output: p,
          requireSamples: true,
        },
      );
      ctx.progress(from + ((100 - from) * (i + 1)) / (bounds.length - 1), `piece ${i + 1}/${bounds.length - 1}`);
      outputs.push(outputFile(p));
    }
    for (const w of cover.dropped) ctx.warn(w);
    return { outputs, data: { pieces: outputs.length, cutsS: bounds.slice(1, -1).map((t) => Number(t.toFixed(3))) } };
  },
});
