/**
 * Reversing a long recording in pieces. ffmpeg's reverse and areverse filters hold their whole input in
 * memory (decoded frames, float samples), so an input longer than what fits the budget is cut into
 * chunks, each reversed on its own, and the chunks are joined last-first with the concat demuxer.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { InputFile, RunContext } from '../../core/tool.js';
import { runFfmpeg } from '../../engines/ffmpeg/run.js';
import { progressSpan } from './progress.js';

/** Bytes one reversing pass may hold (KILN_REVERSE_MEMORY_MB, default 512). */
export function reverseMemoryBudget(): number {
  return (Number(process.env.KILN_REVERSE_MEMORY_MB) || 512) * 1024 * 1024;
}

export interface ChunkedReverse {
  durationS: number;
  chunkS: number;
  /** Extension of the intermediate chunks (a lossless or the output's own container). */
  chunkExt: string;
  /** Maps, filters and codecs that reverse one chunk. */
  reverseArgs: string[];
  /** Maps and codecs of the join into `output`. */
  joinArgs: string[];
  output: string;
  /** Percent of the run the reversing takes; the join takes the rest. */
  reversingPct: number;
  joinStage: string;
}

/** Reverses `input` chunk by chunk into `o.output`; returns the number of chunks. */
export async function reverseInChunks(ctx: RunContext, input: InputFile, o: ChunkedReverse): Promise<number> {
  // A sliver left at the end (container padding) joins the last chunk rather than making its own.
  const n = Math.max(1, Math.ceil((o.durationS - 0.1) / o.chunkS));
  const chunks: string[] = [];
  for (let i = 0; i < n; i++) {
    const start = i * o.chunkS;
    const len = i === n - 1 ? o.durationS - start : o.chunkS;
    const p = path.join(ctx.workDir, `chunk-${String(i).padStart(4, '0')}.${o.chunkExt}`);
    await runFfmpeg(['-ss', start.toFixed(6), '-t', len.toFixed(6), '-i', path.resolve(input.path), ...o.reverseArgs], {
      signal: ctx.signal,
      durationS: len,
      onProgress: progressSpan(ctx, (o.reversingPct * i) / n, (o.reversingPct * (i + 1)) / n, `reversing ${i + 1}/${n}`),
      output: p,
    });
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
  await runFfmpeg(['-f', 'concat', '-safe', '0', '-i', list, ...o.joinArgs], {
    signal: ctx.signal,
    durationS: o.durationS,
    onProgress: progressSpan(ctx, o.reversingPct, 100, o.joinStage),
    output: o.output,
  });
  return n;
}
