import path from 'node:path';
import type { InputFile, RunContext, ToolResult } from '../../../core/tool.js';
import { encodeVideoArgs, type VideoQuality } from '../../../engines/ffmpeg/codecs.js';
import { type VideoContainer, videoContainerOf } from '../../../engines/ffmpeg/containers.js';
import type { MediaInfo } from '../../../engines/ffmpeg/probe.js';
import { runFfmpeg } from '../../../engines/ffmpeg/run.js';
import { outputFile } from '../../_shared/output.js';
import { progressSpan } from '../../_shared/progress.js';

/**
 * The common shape of a video tool: one input, optional filters, re-encoded into the input's own
 * container (or `container`), audio re-encoded or dropped, progress against the output's duration.
 */
export async function transcodeVideo(
  ctx: RunContext,
  input: InputFile,
  info: MediaInfo,
  o: {
    vf?: string;
    af?: string;
    /** -filter_complex graph; its outputs are mapped with `maps`. */
    complex?: string;
    maps?: string[];
    audio?: boolean;
    inputArgs?: string[];
    extraInputs?: string[];
    outArgs?: string[];
    durationS?: number;
    container?: VideoContainer;
    quality?: VideoQuality;
    stage?: string;
    progress?: [number, number];
    cwd?: string;
  } = {},
): Promise<ToolResult> {
  const container = o.container ?? videoContainerOf(input.type?.ext);
  const audio = o.audio ?? !!info.audio;
  const out = ctx.out(container);
  const args = [...(o.inputArgs ?? []), '-i', path.resolve(input.path), ...(o.extraInputs ?? [])];
  if (o.complex) args.push('-filter_complex', o.complex, ...(o.maps ?? []).flatMap((m) => ['-map', m]));
  else {
    args.push('-map', '0:v:0');
    if (audio) args.push('-map', '0:a:0');
    if (o.vf) args.push('-vf', o.vf);
    if (o.af && audio) args.push('-af', o.af);
  }
  args.push(...encodeVideoArgs(container, { quality: o.quality, audio }), '-map_metadata', '0', ...(o.outArgs ?? []));
  const [from, to] = o.progress ?? [0, 100];
  await runFfmpeg(args, {
    signal: ctx.signal,
    durationS: o.durationS ?? info.duration,
    onProgress: progressSpan(ctx, from, to, o.stage ?? 'encoding'),
    output: out,
    cwd: o.cwd,
  });
  return { outputs: [outputFile(out)] };
}
