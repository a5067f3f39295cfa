/**
 * Running ffmpeg: local inputs only, real progress from `-progress pipe:1`, a temp output renamed on
 * success, and a bounded number of processes at once (slots.ts).
 *
 * Why not fluent-ffmpeg: it is archived upstream, it builds command strings through a large
 * event-emitter API we would mostly bypass (filter graphs here are written by hand anyway), and it
 * spawns processes itself, outside exec() with its time-outs, abort handling and stderr tails. A small
 * typed wrapper over exec() with `-progress pipe:1` gives the same progress with far less surface.
 */
import { randomBytes } from 'node:crypto';
import { rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { KilnError } from '../../core/errors.js';
import { exec, type ExecResult } from '../../core/process.js';
import { demuxerArgs } from './demuxer.js';
import { acquireSlot } from './slots.js';

export interface RunFfmpegOptions {
  signal?: AbortSignal;
  /** Expected output duration in seconds; out_time against it gives the percent. A function when it is
   * known only after ffmpeg started (a probe running alongside); 0 meanwhile, so no percent is reported. */
  durationS?: number | (() => number);
  /** Percent 0-100 of this ffmpeg run. */
  onProgress?: (percent: number) => void;
  /**
   * Final output path. ffmpeg writes to a temp name beside it (same extension, so the muxer is still
   * chosen by name) which is renamed on success and removed on failure: no partial file survives.
   * Without it the args must name their own outputs (analysis passes, image sequences in a temp dir).
   */
  output?: string;
  /** An empty output is normally a failure (below); true for formats where empty is an answer (an SRT of a track without cues). */
  allowEmpty?: boolean;
  /**
   * The output must hold some media time: a container header with no sample in it (an input with no
   * samples, or a filter that removed them all) is the same failure as an empty file. Audio outputs;
   * not for muxers that report no out_time (images).
   */
  requireSamples?: boolean;
  /**
   * The output must hold a video frame: an output with a video map and sound can otherwise come out with
   * its audio alone (a precise cut that starts after the last frame starts: ffmpeg drops that frame,
   * writes the sound and exits 0), which is no video.
   */
  requireFrames?: boolean;
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
  const total = () => (typeof opts.durationS === 'function' ? opts.durationS() : (opts.durationS ?? 0)) * 1e6;
  let last = -1;
  let outTimeUs = 0;
  let frames = 0;
  const release = await acquireSlot(opts.signal);
  try {
    const res = await exec('ffmpeg', full, {
      signal: opts.signal,
      cwd: opts.cwd,
      timeoutMs: opts.timeoutMs ?? (Number(process.env.KILN_MEDIA_TIMEOUT_MS) || 3_600_000),
      onStdoutLine: (line) => {
        const m = /^out_time_(?:us|ms)=(\d+)/.exec(line);
        if (m) outTimeUs = Math.max(outTimeUs, Number(m[1]));
        const f = /^frame=(\d+)/.exec(line);
        if (f) frames = Math.max(frames, Number(f[1]));
        if (!opts.onProgress) return;
        if (m && total() > 0) {
          const pct = Math.min(99, Math.floor((Number(m[1]) / total()) * 100));
          if (pct > last) {
            last = pct;
            opts.onProgress(pct);
          }
        } else if (line === 'progress=end') opts.onProgress(100);
      },
      onStderrLine: opts.onStderrLine,
    }).catch((e: unknown) => {
      // The input's fault. "Cannot determine format of input stream … after EOF": a stream ended before
      // one frame of it decoded (a truncated MKV probes fine, then holds no whole frame).
      if (
        e instanceof KilnError &&
        e.code === 'INTERNAL' &&
        /Invalid data found|could not find codec|Error while decoding|moov atom not found|Cannot determine format of input stream \d+:\d+ after EOF/i.test(
          e.message,
        )
      ) {
        throw new KilnError('UNSUPPORTED_INPUT', e.message, { details: e.details, cause: e });
      }
      throw e;
    });
    // ffmpeg can exit 0 having written nothing: "Error writing trailer of x.gif: Invalid argument" when no
    // frame reached the muxer (a one-frame clip through fps=12). An empty file is never a result.
    // No file at all (an image muxer given no frame: -ss past the last frame) is the same answer, not an ENOENT.
    const noSamples = (opts.requireSamples && outTimeUs === 0) || (opts.requireFrames && frames === 0);
    if (tmp && !opts.allowEmpty && (noSamples || ((await stat(tmp).catch(() => undefined))?.size ?? 0) === 0)) {
      throw new KilnError(
        'UNSUPPORTED_INPUT',
        'ffmpeg wrote nothing: the input (or the chosen part of it) gave no frames or samples to encode.',
        {
          reason: 'empty-output',
        },
      );
    }
    if (tmp && opts.output) await rename(tmp, opts.output);
    return res;
  } catch (e) {
    if (tmp) await rm(tmp, { force: true });
    throw e;
  } finally {
    release();
  }
}
