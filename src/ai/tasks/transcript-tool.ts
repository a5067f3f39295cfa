/** What transcribe-audio and auto-subtitles share: run the transcription, write the file, shape the result data. */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { OutputFile, RunContext, ToolResult } from '../../core/tool.js';
import { formatTranscript } from './subtitles.js';
import { type TranscriptionLanguage, transcribe } from './transcribe.js';

const TYPES = { txt: 'text/plain; charset=utf-8', srt: 'application/x-subrip', vtt: 'text/vtt' } as const;

export async function transcriptTool(
  ctx: RunContext,
  toolId: string,
  file: string,
  language: TranscriptionLanguage,
  format: 'txt' | 'srt' | 'vtt',
): Promise<ToolResult> {
  const t = await transcribe(file, {
    toolId,
    dataDir: ctx.dataDir,
    workDir: ctx.workDir,
    language,
    signal: ctx.signal,
    progress: (f, stage) => ctx.progress(Math.round(5 + f * 90), stage),
  });
  const out = ctx.out(format);
  await writeFile(out, formatTranscript(t.segments, format));
  const output: OutputFile = { path: out, name: path.basename(out), contentType: TYPES[format] };
  ctx.progress(100, 'done');
  return {
    outputs: [output],
    data: {
      engine: t.engine,
      model: t.model,
      ...(t.modelFile && { modelFile: t.modelFile }),
      language: t.language,
      languageDetected: t.languageDetected,
      durationS: t.durationS,
      segments: t.segments.length,
      words: t.words,
      chunks: t.chunks,
      device: t.device,
      elapsedMs: t.elapsedMs,
      realtimeFactor: t.durationS > 0 ? Math.round((t.elapsedMs / 1000 / t.durationS) * 100) / 100 : null,
      ...(t.warnings.length && { warnings: t.warnings }),
    },
  };
}
