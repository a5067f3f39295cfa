/** ffprobe as typed data: streams, duration, codecs, fps, rotation and display size of a media file. */
import path from 'node:path';
import { KilnError } from '../../core/errors.js';
import { exec, type ExecResult } from '../../core/process.js';

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
  /** Decoded sample format of an audio stream (s16, s32p, fltp…). */
  sampleFormat?: string;
  /** The stream's bitrate in bit/s, when the container or codec header states it. */
  bitRate?: number;
  language?: string;
  frames?: number;
  /** Clockwise display rotation in degrees (0, 90, 180, 270). */
  rotation: number;
  /** Transfer characteristic as ffprobe names it (bt709, smpte2084 for HDR10/PQ, arib-std-b67 for HLG), when tagged. */
  transfer?: string;
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
  /** Chapters (an audiobook's or a film's), in seconds. */
  chapters: Chapter[];
}

export interface Chapter {
  startS: number;
  endS: number;
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
  sample_fmt?: string;
  bit_rate?: string;
  nb_frames?: string;
  color_transfer?: string;
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
    res = await exec('ffprobe', ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', '-show_chapters', file], {
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
    chapters?: { start_time?: string; end_time?: string; tags?: Record<string, string> }[];
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
      sampleFormat: s.sample_fmt,
      bitRate: Number(s.bit_rate) > 0 ? Number(s.bit_rate) : undefined,
      language: s.tags?.language,
      frames: s.nb_frames ? Number(s.nb_frames) : undefined,
      // ffprobe reports the display matrix counter-clockwise; people think clockwise.
      rotation: ((-rot % 360) + 360) % 360,
      transfer: s.color_transfer,
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
    chapters: (j.chapters ?? [])
      .map((c) => ({ startS: Number(c.start_time), endS: Number(c.end_time), tags: c.tags ?? {} }))
      .filter((c) => Number.isFinite(c.startS) && Number.isFinite(c.endS)),
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

/**
 * How long each frame of the first video stream is shown, in seconds, read from its packets (a GIF's
 * per-frame delays, which the stream's single frame rate cannot describe).
 */
export async function frameDurations(file: string, opts: { signal?: AbortSignal } = {}): Promise<number[]> {
  const res = await exec(
    'ffprobe',
    ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'packet=duration_time', '-of', 'csv=p=0', file],
    { signal: opts.signal, timeoutMs: 60_000, failCode: 'UNSUPPORTED_INPUT' },
  );
  return res.stdout
    .split('\n')
    .map((l) => Number(l.split(',')[0]))
    .filter((d) => Number.isFinite(d) && d > 0);
}

/**
 * Where the data of the first audio stream really end, in seconds: the end of its last decoded frame, read
 * from a seek shortly before the end the header claims (a few frames, not the whole file; decoded, since
 * the last packet of a cut file is often cut too and gives no sound). A truncated file (a
 * recording cut off, a partial download) keeps the header of the whole: an MP3's Xing frame count or a
 * FLAC's sample count says 10 s where 5 s of data are left, and ffprobe's duration is that claim.
 * Undefined when no packet could be read.
 */
export async function audioDataEnd(file: string, claimedS: number, opts: { signal?: AbortSignal } = {}): Promise<number | undefined> {
  const rows = await firstAudioEntries(file, `${Math.max(0, claimedS - 2)}%`, 'frame=pts_time,duration_time', opts.signal);
  let end: number | undefined;
  for (const r of rows)
    if (Number.isFinite(r.pts_time)) end = Math.max(end ?? 0, r.pts_time! + (Number.isFinite(r.duration_time) ? r.duration_time! : 0));
  return end;
}

/**
 * The bitrate of the first audio stream in kbit/s: the one its header states, else measured from the
 * packets of its first minute (Opus in OGG, WebM or MKV states none, and a container's total counts the
 * picture and cover art too). Undefined when neither gives one.
 */
export async function audioKbps(file: string, info: MediaInfo, opts: { signal?: AbortSignal } = {}): Promise<number | undefined> {
  if (!info.audio) return undefined;
  if (info.audio.bitRate) return info.audio.bitRate / 1000;
  let bytes = 0;
  let first = Number.POSITIVE_INFINITY;
  let end = 0;
  for (const r of await firstAudioEntries(file, '%+60', 'packet=pts_time,duration_time,size', opts.signal)) {
    if (!Number.isFinite(r.pts_time) || !(r.size! > 0)) continue;
    bytes += r.size!;
    first = Math.min(first, r.pts_time!);
    end = Math.max(end, r.pts_time! + (r.duration_time || 0));
  }
  const span = end - first;
  return span > 0.5 ? (bytes * 8) / span / 1000 : undefined;
}

/** The `entries` (frame= or packet= fields) of the first audio stream within `interval` (ffprobe -read_intervals), as numbers. */
async function firstAudioEntries(file: string, interval: string, entries: string, signal?: AbortSignal): Promise<Record<string, number>[]> {
  const res = await exec(
    'ffprobe',
    ['-v', 'error', '-select_streams', 'a:0', '-read_intervals', interval, '-show_entries', entries, '-of', 'compact=p=0', file],
    { signal, timeoutMs: 60_000, failCode: 'UNSUPPORTED_INPUT' },
  );
  return res.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => Object.fromEntries(line.split('|').map((kv) => [kv.slice(0, kv.indexOf('=')), Number(kv.slice(kv.indexOf('=') + 1))])));
}
