import type { InputFile, RunContext, ToolResult } from '../../../core/tool.js';
import { audioCodecArgs, reencodeKbps } from '../../../engines/ffmpeg/codecs.js';
import { type AudioFormat, audioFormatOf } from '../../../engines/ffmpeg/containers.js';
import { audioKbps, type MediaInfo } from '../../../engines/ffmpeg/probe.js';
import { runFfmpeg } from '../../../engines/ffmpeg/run.js';
import { keptCoverArt } from '../../../engines/ffmpeg/streams.js';
import { outputFile } from '../../_shared/output.js';
import { progressSpan } from '../../_shared/progress.js';

/** The common shape of an audio tool: one input, an -af chain, written in the input's own format. */
export async function transcodeAudio(
  ctx: RunContext,
  input: InputFile,
  info: MediaInfo,
  o: {
    af?: string;
    inputArgs?: string[];
    /** Inputs after the audio (an FFMETADATA file of retimed chapters). */
    extraInputs?: string[];
    outArgs?: string[];
    durationS?: number;
    format?: AudioFormat;
    kbps?: number;
    stage?: string;
    progress?: [number, number];
  } = {},
): Promise<ToolResult> {
  const format = o.format ?? audioFormatOf(input.type?.ext);
  const out = ctx.out(format);
  // Tags and cover art go with the audio wherever the format holds them (a picture it cannot hold is named).
  const cover = keptCoverArt(info, format);
  // LAME encodes mono or stereo: ffmpeg downmixes 5.1 or 7.1 on its own, which the user should hear of.
  const channels = info.audio?.channels ?? 0;
  if (format === 'mp3' && channels > 2) ctx.warn(`${channels} audio channels downmixed to stereo: MP3 holds at most two`);
  const args = [...(o.inputArgs ?? []), '-i', input.path, ...(o.extraInputs ?? []), '-map', '0:a:0', ...cover.args, '-sn'];
  if (o.af) args.push('-af', o.af);
  // A WAV kept as WAV keeps its sample depth (24-bit, float), an ALAC M4A stays ALAC: a gain or a fade is
  // no reason to cut the depth or to turn lossless audio lossy.
  const keep = o.format === undefined ? info.audio?.codec : undefined;
  const kbps = o.kbps ?? (await sourceKbps(ctx, input, info, format, keep));
  args.push(...audioCodecArgs(format, kbps, keep), '-map_metadata', '0', ...(o.outArgs ?? []));
  const [from, to] = o.progress ?? [0, 100];
  await runFfmpeg(args, {
    signal: ctx.signal,
    durationS: o.durationS ?? info.duration,
    onProgress: progressSpan(ctx, from, to, o.stage ?? 'encoding'),
    output: out,
    requireSamples: true,
  });
  for (const w of cover.dropped) ctx.warn(w);
  return { outputs: [outputFile(out)] };
}

/** Formats whose encoder takes a bitrate (the others are PCM or FLAC; an ALAC M4A ignores it). */
const LOSSY = new Set<string>(['mp3', 'ogg', 'opus', 'webm', 'm4a', 'm4r']);

/**
 * The bitrate of a lossy re-encode of `input` into `format` that the user named none for: about the
 * input's own (reencodeKbps). `keep` is the input codec kept, as audioCodecArgs takes it.
 */
export async function sourceKbps(
  ctx: RunContext,
  input: InputFile,
  info: MediaInfo,
  format: AudioFormat | 'm4r',
  keep?: string,
): Promise<number> {
  const kbps = LOSSY.has(format) && keep !== 'alac' ? await audioKbps(input.path, info, { signal: ctx.signal }) : undefined;
  return reencodeKbps(format, { codec: info.audio?.codec, channels: info.audio?.channels, kbps }, keep);
}
