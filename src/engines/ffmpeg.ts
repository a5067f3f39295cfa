/**
 * FFmpeg adapter: probing (ffprobe JSON), running ffmpeg with real progress, build capabilities, and
 * the codec choices every media tool shares.
 *
 * Why not fluent-ffmpeg: it is archived upstream, it builds command strings through a large
 * event-emitter API we would mostly bypass (filter graphs here are written by hand anyway), and it
 * spawns processes itself, outside exec() with its time-outs, abort handling and stderr tails. A small
 * typed wrapper over exec() with `-progress pipe:1` gives the same progress with far less surface.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { rename, rm } from 'node:fs/promises';
import { z } from 'zod';
import { KilnError } from '../core/errors.js';
import { MAX_INPUT_PIXELS } from '../core/limits.js';
import { exec, type ExecResult } from '../core/process.js';
import type { InputFile, OutputFile, RunContext, ToolResult } from '../core/tool.js';
import { contentTypeFor } from '../core/mime.js';
import { demuxerArgs } from './ffmpeg-demuxer.js';

// ---------------------------------------------------------------------------------------------
// Probing

export interface MediaStream {
  index: number;
  type: 'video' | 'audio' | 'subtitle' | 'data' | 'attachment';
  codec: string;
  width?: number;
  height?: number;
  /** Average frame rate (frames per second). */
  fps?: number;
  sampleRate?: number;
  channels?: number;
  channelLayout?: string;
  language?: string;
  frames?: number;
  /** Clockwise display rotation in degrees (0, 90, 180, 270). */
  rotation: number;
  /** Attached cover art (an mp3's picture), not a moving picture. */
  attachedPic: boolean;
  tags: Record<string, string>;
}

export interface MediaInfo {
  /** Seconds (0 when unknown). */
  duration: number;
  formatName: string;
  streams: MediaStream[];
  /** First moving-picture stream. */
  video?: MediaStream;
  audio?: MediaStream;
  subtitles: MediaStream[];
  tags: Record<string, string>;
}

interface RawStream {
  index: number;
  codec_type?: string;
  codec_name?: string;
  width?: number;
  height?: number;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  sample_rate?: string;
  channels?: number;
  channel_layout?: string;
  nb_frames?: string;
  duration?: string;
  tags?: Record<string, string>;
  disposition?: Record<string, number>;
  side_data_list?: { rotation?: number }[];
}

function rate(r: string | undefined): number | undefined {
  if (!r) return undefined;
  const [a, b] = r.split('/').map(Number);
  if (!a || !b || !Number.isFinite(a / b)) return undefined;
  return a / b;
}

function lowerKeys(t: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(t ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
}

/** Streams, duration, codecs, fps and rotation of a media file. Unreadable files are UNSUPPORTED_INPUT. */
export async function probe(file: string, opts: { signal?: AbortSignal; name?: string } = {}): Promise<MediaInfo> {
  let res: ExecResult;
  try {
    res = await exec('ffprobe', ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', file], {
      signal: opts.signal,
      timeoutMs: 60_000,
      failCode: 'UNSUPPORTED_INPUT',
    });
  } catch (e) {
    if (e instanceof KilnError && e.code === 'UNSUPPORTED_INPUT') {
      throw new KilnError(
        'UNSUPPORTED_INPUT',
        `${opts.name ?? path.basename(file)} could not be read as media: ${e.message.replace(/^ffprobe failed \(exit \d+\): /, '')}`,
      );
    }
    throw e;
  }
  const j = JSON.parse(res.stdout || '{}') as {
    streams?: RawStream[];
    format?: { duration?: string; format_name?: string; tags?: Record<string, string> };
  };
  const streams: MediaStream[] = (j.streams ?? []).map((s) => {
    const rot = Number(s.side_data_list?.find((d) => d.rotation !== undefined)?.rotation ?? s.tags?.rotate ?? 0);
    const type = (['video', 'audio', 'subtitle', 'attachment'].includes(s.codec_type ?? '') ? s.codec_type : 'data') as MediaStream['type'];
    return {
      index: s.index,
      type,
      codec: s.codec_name ?? 'unknown',
      width: s.width,
      height: s.height,
      fps: type === 'video' ? (rate(s.avg_frame_rate) ?? rate(s.r_frame_rate)) : undefined,
      sampleRate: s.sample_rate ? Number(s.sample_rate) : undefined,
      channels: s.channels,
      channelLayout: s.channel_layout,
      language: s.tags?.language,
      frames: s.nb_frames ? Number(s.nb_frames) : undefined,
      // ffprobe reports the display matrix counter-clockwise; people think clockwise.
      rotation: ((-rot % 360) + 360) % 360,
      attachedPic: s.disposition?.attached_pic === 1,
      tags: lowerKeys(s.tags),
    };
  });
  const streamDur = Math.max(0, ...(j.streams ?? []).map((s) => Number(s.duration) || 0));
  const duration = Number(j.format?.duration) || streamDur || 0;
  return {
    duration,
    formatName: j.format?.format_name ?? '',
    streams,
    video: streams.find((s) => s.type === 'video' && !s.attachedPic),
    audio: streams.find((s) => s.type === 'audio'),
    subtitles: streams.filter((s) => s.type === 'subtitle'),
    tags: lowerKeys(j.format?.tags),
  };
}

/** Width and height as displayed (rotation applied), rounded down to even numbers for 4:2:0 encoders. */
export function displaySize(v: MediaStream): { width: number; height: number } {
  const w = v.width ?? 0;
  const h = v.height ?? 0;
  const [dw, dh] = v.rotation === 90 || v.rotation === 270 ? [h, w] : [w, h];
  return { width: even(dw), height: even(dh) };
}

export function even(n: number): number {
  return Math.max(2, Math.floor(n / 2) * 2);
}

/** The smallest frame of the target ratio ('16:9') that holds the source whole; even sides. */
export function padSize(src: { width: number; height: number }, target: string): { width: number; height: number } {
  const [a, b] = target.split(':').map(Number) as [number, number];
  const up = (n: number) => Math.ceil(n / 2) * 2;
  if (src.width / src.height < a / b) return { width: up((src.height * a) / b), height: src.height };
  return { width: src.width, height: up((src.width * b) / a) };
}

const STILL_FORMATS = /(^|,)(image2|[a-z]+_pipe)(,|$)/;

/** Probes a tool's video input: a moving-picture stream is required. */
export async function probeVideo(file: InputFile, signal?: AbortSignal): Promise<MediaInfo & { video: MediaStream }> {
  const info = await probe(file.path, { signal, name: file.name });
  if (info.video && STILL_FORMATS.test(info.formatName)) {
    throw new KilnError('UNSUPPORTED_INPUT', `${file.name} is a still image, not a video.`, { reason: 'no-video-stream' });
  }
  if (!info.video)
    throw new KilnError('UNSUPPORTED_INPUT', `${file.name} has no video stream${info.audio ? ' (it holds only audio)' : ''}.`, {
      reason: 'no-video-stream',
    });
  // A header can declare any frame size (a 30-byte GIF says 65535 × 65535): refuse it here, not as an ffmpeg failure.
  const { width = 0, height = 0 } = info.video;
  if (width <= 0 || height <= 0)
    throw new KilnError('UNSUPPORTED_INPUT', `${file.name} declares no usable frame size (${width} × ${height}).`);
  if (width * height > MAX_INPUT_PIXELS)
    throw new KilnError(
      'LIMIT_EXCEEDED',
      `${file.name} declares ${width} × ${height} frames, more than the limit of ${MAX_INPUT_PIXELS} pixels (KILN_MAX_PIXELS).`,
    );
  return info as MediaInfo & { video: MediaStream };
}

/** Probes a tool's audio input: an audio stream is required. */
export async function probeAudio(file: InputFile, signal?: AbortSignal): Promise<MediaInfo & { audio: MediaStream }> {
  const info = await probe(file.path, { signal, name: file.name });
  if (!info.audio) throw new KilnError('UNSUPPORTED_INPUT', `${file.name} has no audio stream.`, { reason: 'no-audio-stream' });
  return info as MediaInfo & { audio: MediaStream };
}

// ---------------------------------------------------------------------------------------------
// Running ffmpeg

/** Threads per ffmpeg process: all cores; concurrency is bounded by the media slots below instead. */
export const FFMPEG_THREADS = Math.max(1, os.availableParallelism?.() ?? os.cpus().length);

/**
 * One shared limit for concurrent ffmpeg processes (KILN_MEDIA_CONCURRENCY, default: one per two
 * cores), since each already uses every core; more at once only adds memory and context switches.
 */
const MEDIA_SLOTS = Math.max(1, Number(process.env.KILN_MEDIA_CONCURRENCY) || Math.floor(FFMPEG_THREADS / 2) || 1);
let busy = 0;
const waiting: (() => void)[] = [];

async function acquireSlot(signal?: AbortSignal): Promise<() => void> {
  if (busy >= MEDIA_SLOTS) {
    await new Promise<void>((resolve, reject) => {
      const go = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        const i = waiting.indexOf(go);
        if (i >= 0) waiting.splice(i, 1);
        reject(new KilnError('CANCELLED', 'The run was cancelled.'));
      };
      waiting.push(go);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  } else busy++;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const next = waiting.shift();
    if (next) next();
    else busy--;
  };
}

export interface RunFfmpegOptions {
  signal?: AbortSignal;
  /** Expected output duration in seconds; out_time against it gives the percent. */
  durationS?: number;
  /** Percent 0-100 of this ffmpeg run. */
  onProgress?: (percent: number) => void;
  /**
   * Final output path. ffmpeg writes to a temp name beside it (same extension, so the muxer is still
   * chosen by name) which is renamed on success and removed on failure: no partial file survives.
   * Without it the args must name their own outputs (analysis passes, image sequences in a temp dir).
   */
  output?: string;
  onStderrLine?: (line: string) => void;
  /** Working directory: filters that take file names (subtitles, textfile, vidstab) get plain relative names. */
  cwd?: string;
  timeoutMs?: number;
  /** Log level; analysis filters (loudnorm, silencedetect) print at info. */
  logLevel?: 'error' | 'info';
}

/**
 * Every input may be opened through local files only: an uploaded container or playlist that names a
 * URL (http, rtmp, a data: or concat: chain…) must not make the server fetch it. protocol_whitelist is a
 * per-input option, so it goes before each -i (nested inputs such as concat lists inherit it).
 */
export function localInputs(args: string[]): string[] {
  const out: string[] = [];
  args.forEach((a, i) => {
    if (a === '-i' && args[i - 2] !== '-protocol_whitelist') out.push('-protocol_whitelist', 'file,pipe');
    if (a === '-i') out.push(...demuxerArgs(args, i));
    out.push(a);
  });
  return out;
}

/** Runs ffmpeg with `args` (inputs, filters, codecs; not the output when opts.output is set). */
export async function runFfmpeg(args: string[], opts: RunFfmpegOptions = {}): Promise<ExecResult> {
  const tmp = opts.output
    ? path.join(path.dirname(opts.output), `.${randomBytes(6).toString('hex')}.partial${path.extname(opts.output)}`)
    : undefined;
  const full = [
    '-hide_banner',
    '-nostdin',
    '-y',
    '-loglevel',
    opts.logLevel ?? 'error',
    '-nostats',
    '-progress',
    'pipe:1',
    ...localInputs(args),
  ];
  if (tmp) full.push(tmp);
  const total = (opts.durationS ?? 0) * 1e6;
  let last = -1;
  const release = await acquireSlot(opts.signal);
  try {
    const res = await exec('ffmpeg', full, {
      signal: opts.signal,
      cwd: opts.cwd,
      timeoutMs: opts.timeoutMs ?? (Number(process.env.KILN_MEDIA_TIMEOUT_MS) || 3_600_000),
      onStdoutLine: (line) => {
        if (!opts.onProgress) return;
        const m = /^out_time_(?:us|ms)=(\d+)/.exec(line);
        if (m && total > 0) {
          const pct = Math.min(99, Math.floor((Number(m[1]) / total) * 100));
          if (pct > last) {
            last = pct;
            opts.onProgress(pct);
          }
        } else if (line === 'progress=end') opts.onProgress(100);
      },
      onStderrLine: opts.onStderrLine,
    }).catch((e: unknown) => {
      if (
        e instanceof KilnError &&
        e.code === 'INTERNAL' &&
        /Invalid data found|could not find codec|Error while decoding|moov atom not found/i.test(e.message)
      ) {
        throw new KilnError('UNSUPPORTED_INPUT', e.message, { details: e.details, cause: e });
      }
      throw e;
    });
    if (tmp && opts.output) await rename(tmp, opts.output);
    return res;
  } catch (e) {
    if (tmp) await rm(tmp, { force: true });
    throw e;
  } finally {
    release();
  }
}

/** ctx.progress restricted to the part [from, to] of the whole run (for multi-pass tools). */
export function progressSpan(ctx: RunContext, from: number, to: number, stage: string): (pct: number) => void {
  return (pct) => ctx.progress(from + ((to - from) * pct) / 100, stage);
}

// ---------------------------------------------------------------------------------------------
// Build capabilities

export interface FfmpegCapabilities {
  filters: Set<string>;
  encoders: Set<string>;
  vidstab: boolean;
  rubberband: boolean;
  libass: boolean;
  drawtext: boolean;
}

let capsPromise: Promise<FfmpegCapabilities> | undefined;

/** Filters and encoders of the installed ffmpeg build (cached for the process). */
export function ffmpegCapabilities(): Promise<FfmpegCapabilities> {
  capsPromise ??= (async () => {
    const list = async (what: string) => {
      const r = await exec('ffmpeg', ['-hide_banner', what], { timeoutMs: 20_000 }).catch(() => undefined);
      const names = new Set<string>();
      for (const line of (r?.stdout ?? '').split('\n')) {
        const m = /^\s*[A-Z.|]{3,6}\s+(\S+)\s/.exec(line);
        if (m) names.add(m[1]!);
      }
      return names;
    };
    const [filters, encoders] = await Promise.all([list('-filters'), list('-encoders')]);
    return {
      filters,
      encoders,
      vidstab: filters.has('vidstabdetect') && filters.has('vidstabtransform'),
      rubberband: filters.has('rubberband'),
      libass: filters.has('subtitles'),
      drawtext: filters.has('drawtext'),
    };
  })();
  return capsPromise;
}

/** Lines for `kiln doctor` about optional parts of the ffmpeg build. */
export async function ffmpegDoctorNotes(): Promise<string[]> {
  const c = await ffmpegCapabilities();
  if (c.filters.size === 0) return [];
  const notes: string[] = [];
  if (!c.vidstab)
    notes.push(
      'FFmpeg build lacks vidstab (vidstabdetect/vidstabtransform): stabilize-video is unavailable. Install a build with libvidstab (Debian: ffmpeg).',
    );
  if (!c.rubberband)
    notes.push('FFmpeg build lacks rubberband: pitch-shift falls back to asetrate+atempo, video-speed keepPitch to atempo.');
  if (!c.libass) notes.push('FFmpeg build lacks libass (subtitles filter): burn-subtitles is unavailable.');
  if (!c.drawtext) notes.push('FFmpeg build lacks drawtext (libfreetype): watermark-video is unavailable.');
  return notes;
}

// ---------------------------------------------------------------------------------------------
// Containers and codecs

export type VideoContainer = 'mp4' | 'mov' | 'webm' | 'avi' | 'mkv';
export type AudioFormat = 'mp3' | 'wav' | 'ogg' | 'flac' | 'm4a' | 'opus';

/** The container an output keeps for a "same as input" tool: the input's own when kiln writes it, else MP4. */
export function videoContainerOf(ext: string | undefined): VideoContainer {
  if (ext === 'mov' || ext === 'webm' || ext === 'avi' || ext === 'mkv' || ext === 'mp4') return ext;
  return 'mp4';
}

/** Streams can be copied as they are when the output keeps the input's own container. */
export function keepsContainer(ext: string | undefined): boolean {
  return videoContainerOf(ext) === ext;
}

/** Same for audio: video containers given to an audio tool come out as M4A. */
export function audioFormatOf(ext: string | undefined): AudioFormat {
  if (ext === 'mp3' || ext === 'wav' || ext === 'ogg' || ext === 'flac' || ext === 'm4a' || ext === 'opus') return ext;
  if (ext === 'aac' || ext === 'mp4' || ext === 'mov') return 'm4a';
  if (ext === 'webm' || ext === 'mkv') return 'ogg';
  return 'mp3';
}

/**
 * Quality levels. CRF for H.264 (x264 default 23), VP9 (constant quality with -b:v 0) and qscale for
 * MPEG-4 Part 2; audio bitrate follows.
 *   high: x264 CRF 18, VP9 CRF 24, mpeg4 q 2, audio 192k
 *   balanced: x264 CRF 23, VP9 CRF 32, mpeg4 q 4, audio 128k
 *   small: x264 CRF 28, VP9 CRF 40, mpeg4 q 8, audio 96k
 */
export interface VideoQuality {
  x264Crf: number;
  vp9Crf: number;
  mpeg4Q: number;
  audioKbps: number;
}

export const QUALITY: Record<'high' | 'balanced' | 'small', VideoQuality> = {
  high: { x264Crf: 18, vp9Crf: 24, mpeg4Q: 2, audioKbps: 192 },
  balanced: { x264Crf: 23, vp9Crf: 32, mpeg4Q: 4, audioKbps: 128 },
  small: { x264Crf: 28, vp9Crf: 40, mpeg4Q: 8, audioKbps: 96 },
};

/** compress-video's strengths: light = convert's balanced, each step about 5 CRF (roughly half the bitrate) further. */
export const COMPRESSION: Record<'light' | 'balanced' | 'strong', VideoQuality> = {
  light: { x264Crf: 23, vp9Crf: 32, mpeg4Q: 4, audioKbps: 128 },
  balanced: { x264Crf: 28, vp9Crf: 38, mpeg4Q: 8, audioKbps: 128 },
  strong: { x264Crf: 33, vp9Crf: 45, mpeg4Q: 14, audioKbps: 64 },
};

/** Video encoder args that fit the container (mp4/mov/mkv: H.264, webm: VP9, avi: MPEG-4 Part 2). */
export function videoCodecArgs(container: VideoContainer, q: VideoQuality = QUALITY.balanced): string[] {
  const threads = ['-threads', String(FFMPEG_THREADS)];
  switch (container) {
    case 'webm':
      // deadline good + cpu-used 5 keeps VP9 usable on two cores; row-mt spreads rows over threads.
      return [
        '-c:v',
        'libvpx-vp9',
        '-crf',
        String(q.vp9Crf),
        '-b:v',
        '0',
        '-deadline',
        'good',
        '-cpu-used',
        '5',
        '-row-mt',
        '1',
        '-pix_fmt',
        'yuv420p',
        ...threads,
      ];
    case 'avi':
      return ['-c:v', 'mpeg4', '-q:v', String(q.mpeg4Q), '-pix_fmt', 'yuv420p', ...threads];
    default:
      // veryfast: near the size of medium at a fraction of the time on small machines.
      return ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', String(q.x264Crf), '-pix_fmt', 'yuv420p', ...threads];
  }
}

/** Audio encoder args that fit the video container (AAC, Opus for webm, MP3 for avi). */
export function audioCodecArgsForVideo(container: VideoContainer, kbps = 128): string[] {
  if (container === 'webm') return ['-c:a', 'libopus', '-b:a', `${kbps}k`];
  if (container === 'avi') return ['-c:a', 'libmp3lame', '-b:a', `${kbps}k`];
  return ['-c:a', 'aac', '-b:a', `${kbps}k`];
}

/** Muxer flags: MP4/MOV get their index at the front (faststart) so playback starts before the download ends. */
export function muxArgs(container: VideoContainer | 'm4a' | 'm4r'): string[] {
  if (container === 'mp4' || container === 'mov' || container === 'm4a') return ['-movflags', '+faststart'];
  if (container === 'm4r') return ['-f', 'ipod', '-movflags', '+faststart'];
  return [];
}

/** Full encode args for a video output with optional audio. */
export function encodeVideoArgs(container: VideoContainer, opts: { quality?: VideoQuality; audio: boolean }): string[] {
  const q = opts.quality ?? QUALITY.balanced;
  return [
    ...videoCodecArgs(container, q),
    ...(opts.audio ? audioCodecArgsForVideo(container, q.audioKbps) : ['-an']),
    ...muxArgs(container),
  ];
}

/** Encoder args for an audio file format (bitrate only matters for lossy formats). */
export function audioCodecArgs(format: AudioFormat | 'm4r', kbps = 192): string[] {
  switch (format) {
    case 'mp3':
      return ['-c:a', 'libmp3lame', '-b:a', `${kbps}k`];
    case 'wav':
      return ['-c:a', 'pcm_s16le'];
    case 'flac':
      return ['-c:a', 'flac'];
    case 'ogg':
      return ['-c:a', 'libvorbis', '-b:a', `${kbps}k`];
    case 'opus':
      return ['-c:a', 'libopus', '-b:a', `${Math.min(kbps, 256)}k`];
    case 'm4a':
    case 'm4r':
      return ['-c:a', 'aac', '-b:a', `${kbps}k`, ...muxArgs(format)];
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers shared by the tools

export function outputFile(p: string): OutputFile {
  const name = path.basename(p);
  return { path: p, name, contentType: contentTypeFor(name) };
}

/** A colour setting: #rgb or #rrggbb. */
export const colorSetting = (def: string) =>
  z
    .string()
    .regex(/^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/, 'expected a colour like #ff8800')
    .default(def);

/** '#abc' / '#aabbcc' → '0xAABBCC' (ffmpeg colour syntax). */
export function ffColor(hex: string): string {
  let h = hex.replace('#', '');
  if (h.length === 3) h = [...h].map((c) => c + c).join('');
  return '0x' + h.toUpperCase();
}

/** atempo accepts 0.5-2 per instance (wider ranges lose quality): chain instances for 0.25-4. */
export function atempoChain(factor: number): string {
  const parts: string[] = [];
  let f = factor;
  while (f > 2) {
    parts.push('atempo=2');
    f /= 2;
  }
  while (f < 0.5) {
    parts.push('atempo=0.5');
    f /= 0.5;
  }
  parts.push(`atempo=${f.toFixed(6)}`);
  return parts.join(',');
}

/** Duration limit checked before any work (LIMIT_EXCEEDED). */
export function requireMaxDuration(info: MediaInfo, maxS: number, what: string): void {
  if (info.duration > maxS) {
    throw new KilnError('LIMIT_EXCEEDED', `${what} is ${info.duration.toFixed(1)} s long; the limit is ${maxS} s.`, {
      details: { durationS: info.duration, limitS: maxS },
    });
  }
}

export interface LoudnormMeasure {
  input_i: string;
  input_tp: string;
  input_lra: string;
  input_thresh: string;
  target_offset: string;
}

export const LOUDNORM_TARGET = { i: -16, tp: -1.5, lra: 11 };

/**
 * Two-pass EBU R128: pass one measures the input, pass two applies loudnorm with the measured values
 * (linear when possible), which lands on the target far more precisely than a single dynamic pass.
 * Returns the filter for pass two.
 */
export async function measureLoudnorm(
  input: string,
  durationS: number,
  opts: { signal?: AbortSignal; onProgress?: (pct: number) => void; extraInputArgs?: string[] },
): Promise<string> {
  const t = LOUDNORM_TARGET;
  const res = await runFfmpeg(
    [
      ...(opts.extraInputArgs ?? []),
      '-i',
      input,
      '-vn',
      '-sn',
      '-af',
      `loudnorm=I=${t.i}:TP=${t.tp}:LRA=${t.lra}:print_format=json`,
      '-f',
      'null',
      '-',
    ],
    { signal: opts.signal, durationS, onProgress: opts.onProgress, logLevel: 'info' },
  );
  const m = /\{[^{}]*"input_i"[^{}]*\}/.exec(res.stderr);
  if (!m) throw new KilnError('INTERNAL', 'ffmpeg loudnorm did not report its measurement.');
  const j = JSON.parse(m[0]) as LoudnormMeasure;
  if (!Number.isFinite(Number(j.input_i))) {
    throw new KilnError('UNSUPPORTED_INPUT', 'The audio is silent: there is no loudness to normalize.', { reason: 'silent-audio' });
  }
  return `loudnorm=I=${t.i}:TP=${t.tp}:LRA=${t.lra}:measured_I=${j.input_i}:measured_TP=${j.input_tp}:measured_LRA=${j.input_lra}:measured_thresh=${j.input_thresh}:offset=${j.target_offset}:linear=true`;
}

/** Silences found by silencedetect, in seconds. */
export async function detectSilences(
  input: string,
  durationS: number,
  thresholdDb: number,
  minSilenceS: number,
  opts: { signal?: AbortSignal; onProgress?: (pct: number) => void },
): Promise<{ start: number; end: number }[]> {
  const out: { start: number; end: number }[] = [];
  let start: number | undefined;
  await runFfmpeg(['-i', input, '-vn', '-sn', '-af', `silencedetect=noise=${thresholdDb}dB:d=${minSilenceS}`, '-f', 'null', '-'], {
    signal: opts.signal,
    durationS,
    onProgress: opts.onProgress,
    logLevel: 'info',
    onStderrLine: (line) => {
      const s = /silence_start: (-?[\d.]+)/.exec(line);
      if (s) start = Math.max(0, Number(s[1]));
      const e = /silence_end: ([\d.]+)/.exec(line);
      if (e && start !== undefined) {
        out.push({ start, end: Number(e[1]) });
        start = undefined;
      }
    },
  });
  if (start !== undefined) out.push({ start, end: durationS });
  return out;
}

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

/** The common shape of an audio tool: one input, an -af chain, written in the input's own format. */
export async function transcodeAudio(
  ctx: RunContext,
  input: InputFile,
  info: MediaInfo,
  o: {
    af?: string;
    inputArgs?: string[];
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
  const args = [...(o.inputArgs ?? []), '-i', input.path, '-map', '0:a:0', '-vn', '-sn'];
  if (o.af) args.push('-af', o.af);
  args.push(...audioCodecArgs(format, o.kbps ?? 192), '-map_metadata', '0', ...(o.outArgs ?? []));
  const [from, to] = o.progress ?? [0, 100];
  await runFfmpeg(args, {
    signal: ctx.signal,
    durationS: o.durationS ?? info.duration,
    onProgress: progressSpan(ctx, from, to, o.stage ?? 'encoding'),
    output: out,
  });
  return { outputs: [outputFile(out)] };
}

/** Settings shared by trim tools: endS must come after startS. */
export function checkRange(s: { startS: number; endS: number }): string | void {
  if (s.endS <= s.startS) return 'endS must be greater than startS.';
}

/** A start beyond the end of the input is a bad request, not an empty output. */
export function requireStartInside(info: MediaInfo, startS: number): void {
  if (info.duration > 0 && startS >= info.duration) {
    throw new KilnError('VALIDATION_ERROR', `startS (${startS} s) is at or beyond the end of the input (${info.duration.toFixed(2)} s).`, {
      details: [{ path: 'startS', message: 'beyond the end of the input' }],
    });
  }
}
