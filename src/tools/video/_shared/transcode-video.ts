import path from 'node:path';
import { KilnError } from '../../../core/errors.js';
import { MAX_INPUT_PIXELS } from '../../../core/limits.js';
import type { InputFile, RunContext, ToolResult } from '../../../core/tool.js';
import { encodeVideoArgs, type VideoQuality, withEvenSides } from '../../../engines/ffmpeg/codecs.js';
import { type VideoContainer, videoContainerOf } from '../../../engines/ffmpeg/containers.js';
import { toSdrFilters } from '../../../engines/ffmpeg/hdr.js';
import type { MediaInfo } from '../../../engines/ffmpeg/probe.js';
import { runFfmpeg } from '../../../engines/ffmpeg/run.js';
import { keptStreams } from '../../../engines/ffmpeg/streams.js';
import { outputFile } from '../../_shared/output.js';
import { progressSpan } from '../../_shared/progress.js';

export interface TranscodeOptions {
  vf?: string;
  af?: string;
  /** -filter_complex graph; its outputs are mapped with `maps`. */
  complex?: string;
  maps?: string[];
  audio?: boolean;
  /**
   * Keep every audio track and every subtitle track the container can hold (conversions), not only the
   * first audio track; the tracks left out are named in the result's `warnings`.
   */
  keepStreams?: boolean;
  /** With keepStreams: leave every subtitle track out for this reason (their cue times would not match). */
  subtitlesLeftOut?: string;
  inputArgs?: string[];
  extraInputs?: string[];
  outArgs?: string[];
  durationS?: number;
  container?: VideoContainer;
  quality?: VideoQuality;
  stage?: string;
  progress?: [number, number];
  cwd?: string;
}

/**
 * The common shape of a video tool: one input, optional filters, re-encoded into the input's own
 * container (or `container`), audio re-encoded or dropped, progress against the output's duration.
 *
 * `info` may be the probe still running (issue #17): ffprobe and ffmpeg each load ~200 shared libraries
 * before any work (~0.2 s of CPU apiece), so a plain re-encode starts both at once instead of one after
 * the other. Until the probe answers, ffmpeg's decoders refuse frames over the pixel limit themselves
 * (-max_pixels) and the audio map is optional; when the probe refuses the input, ffmpeg is stopped and
 * the probe's error is the answer. Filters that depend on the streams (`af`, `complex`) wait for it.
 */
export async function transcodeVideo(
  ctx: RunContext,
  input: InputFile,
  info: MediaInfo | Promise<MediaInfo>,
  o: TranscodeOptions = {},
): Promise<ToolResult> {
  if (info instanceof Promise && (o.af || o.complex)) info = await info;
  if (!(info instanceof Promise)) {
    refuseTooThin(input, info, o);
    return encode(ctx, input, info, o, ctx.signal);
  }
  const probing = info;
  // The probe's failure is handled below, after ffmpeg has stopped; never an unhandled rejection meanwhile.
  probing.catch(() => {});
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  let known: MediaInfo | undefined;
  const running = encode(ctx, input, undefined, o, stop.signal, () => known?.duration ?? 0);
  running.catch(() => {});
  try {
    known = await probing.catch(async (e: unknown) => {
      stop.abort();
      await running.catch(() => {});
      throw e;
    });
    // Known before ffmpeg's own failure is read: the clear refusal is the answer, not its filter error.
    try {
      refuseTooThin(input, known, o);
    } catch (e) {
      stop.abort();
      await running.catch(() => {});
      throw e;
    }
    // The blind start keeps every audio track but no subtitles (their codec depends on the kind) nor attached
    // files (MKV only): an input with either is started again, knowing them. So is HDR video, which the
    // 8-bit SDR encoders get tone-mapped (sdrFilters).
    const restart =
      (o.keepStreams && known.streams.some((x) => x.type === 'subtitle' || x.type === 'attachment')) || !!(await sdrFilters(known, o));
    if (restart) {
      stop.abort();
      await running.catch(() => {});
      return await encode(ctx, input, known, o, ctx.signal);
    }
    return await running;
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
  }
}

/**
 * H.264 (MP4, MOV, MKV) needs even sides: the even-sides crop takes an odd side down by one, so a side of
 * one pixel (a 1x1 tracking GIF) would be cropped to nothing and ffmpeg fail with "Error reinitializing
 * filters". Refused by name instead; VP9 (WebM) and MPEG-4 (AVI) take it.
 */
function refuseTooThin(input: InputFile, info: MediaInfo, o: TranscodeOptions): void {
  if (!o.complex) refuseTooThinFor(input, info, o.container ?? videoContainerOf(input.type?.ext));
}

/** The same refusal for a tool that encodes into `container` without transcodeVideo (trim-video's precise cut). */
export function refuseTooThinFor(input: InputFile, info: MediaInfo, container: VideoContainer): void {
  if (withEvenSides(container)) refuseUnderTwoPixels(input, info, `${container.toUpperCase()} (H.264)`, '; WebM or AVI take it');
}

/** Refuses a video under 2 pixels either way, naming what needs them (`what`), before ffmpeg fails on it. */
export function refuseUnderTwoPixels(input: InputFile, info: MediaInfo, what: string, hint = ''): void {
  const v = info.video;
  if (!v || ((v.width ?? 2) >= 2 && (v.height ?? 2) >= 2)) return;
  throw new KilnError(
    'UNSUPPORTED_INPUT',
    `${input.name} is ${v.width}x${v.height} pixels: ${what} needs at least 2 pixels each way${hint}.`,
    {
      details: { file: input.name, width: v.width, height: v.height },
    },
  );
}

/**
 * HDR video (PQ, HLG) re-encoded by these 8-bit SDR encoders (H.264, VP9 profile 0, MPEG-4) kept its
 * HDR tags on 8-bit pictures: players showed PQ washed out, and an iPhone's HLG clip converted to MP4
 * was neither SDR nor proper HDR. Such video is tone-mapped to BT.709 first (hdr.ts), as the GIF and
 * frame tools do; '' otherwise, and for filter graphs (`complex`: their tools build the chain).
 */
async function sdrFilters(info: MediaInfo | undefined, o: TranscodeOptions): Promise<string> {
  if (!info?.video || o.complex) return '';
  return toSdrFilters(info.video);
}

/** `vf` after the tone-mapping an HDR input needs before an 8-bit SDR encoder (sdrFilters); for tools that build their own -vf. */
export async function withSdr(info: MediaInfo, vf?: string): Promise<string | undefined> {
  const sdr = await sdrFilters(info, {});
  return sdr ? `${sdr}${vf ?? ''}`.replace(/,$/, '') : vf;
}

async function encode(
  ctx: RunContext,
  input: InputFile,
  info: MediaInfo | undefined,
  o: TranscodeOptions,
  signal: AbortSignal,
  laterDuration?: () => number,
): Promise<ToolResult> {
  const container = o.container ?? videoContainerOf(input.type?.ext);
  // undefined: not known yet (the probe is running), so the first audio stream is mapped if there is one.
  const kept =
    o.keepStreams && info && o.audio !== false ? keptStreams(info, container, { subtitlesLeftOut: o.subtitlesLeftOut }) : undefined;
  const audio = o.audio ?? (info ? !!info.audio : undefined);
  const out = ctx.out(container);
  const guard = info ? [] : ['-max_pixels', String(MAX_INPUT_PIXELS)];
  const args = [...guard, ...(o.inputArgs ?? []), '-i', path.resolve(input.path), ...(o.extraInputs ?? [])];
  if (o.complex) {
    // The graph's outputs, then the input's own audio and subtitle tracks (as they are, not through the graph).
    args.push('-filter_complex', o.complex, ...(o.maps ?? []).flatMap((m) => ['-map', m]));
    if (kept) args.push(...kept.args);
  } else {
    args.push('-map', '0:v:0');
    if (kept) args.push(...kept.args);
    else if (audio !== false) args.push('-map', audio ? '0:a:0' : o.keepStreams ? '0:a?' : '0:a:0?');
    // H.264 refuses odd sides (a 101x75 input): the even-sides crop ends every chain that feeds it.
    const vf = withEvenSides(container, info ? await withSdr(info, o.vf) : o.vf);
    if (vf) args.push('-vf', vf);
    if (o.af && audio) args.push('-af', o.af);
  }
  args.push(...encodeVideoArgs(container, { quality: o.quality, audio: audio !== false }), '-map_metadata', '0', ...(o.outArgs ?? []));
  const [from, to] = o.progress ?? [0, 100];
  return runFfmpeg(args, {
    signal,
    durationS: o.durationS ?? (info ? info.duration : laterDuration),
    onProgress: progressSpan(ctx, from, to, o.stage ?? 'encoding'),
    output: out,
    cwd: o.cwd,
  }).then(() => {
    for (const w of kept?.dropped ?? []) ctx.warn(w);
    return { outputs: [outputFile(out)] };
  });
}
