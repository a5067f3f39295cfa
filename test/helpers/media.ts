/**
 * Media fixtures and measurements for the video/audio suites: tiny clips made with ffmpeg's lavfi
 * sources, speech from espeak-ng, SRT files, and ffprobe/ffmpeg read-backs of the outputs (independent
 * of the engine module under test).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createWorkspace } from '../../src/core/workspace.js';
import { getTool } from '../../src/tools/index.js';
import { inputFile, runTool } from '../../src/tools/run-tool.js';

function ff(args: string[]): void {
  execFileSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
}

const VCODEC: Record<string, string[]> = {
  mp4: ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac'],
  mov: ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac'],
  mkv: ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac'],
  webm: ['-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8', '-c:a', 'libopus'],
  avi: ['-c:v', 'mpeg4', '-c:a', 'libmp3lame'],
};

export interface VideoOpts {
  width?: number;
  height?: number;
  durationS?: number;
  fps?: number;
  audio?: boolean;
  freq?: number;
  /** Extra output args (metadata, rotation…). */
  extra?: string[];
  /** 'testsrc2' (moving pattern) or a solid colour 'color=c=red'. */
  source?: string;
}

/** A small test clip: testsrc2 picture (with a frame counter), optional sine audio. */
export function makeVideo(dir: string, name: string, o: VideoOpts = {}): string {
  const { width = 160, height = 120, durationS = 2, fps = 25, audio = true, freq = 440 } = o;
  const ext = path.extname(name).slice(1);
  const src = o.source
    ? `${o.source}:s=${width}x${height}:r=${fps}:d=${durationS}`
    : `testsrc2=s=${width}x${height}:r=${fps}:d=${durationS}`;
  const p = path.join(dir, name);
  const args = ['-f', 'lavfi', '-i', src];
  if (audio) args.push('-f', 'lavfi', '-i', `sine=f=${freq}:r=48000:d=${durationS}`, '-ac', '2');
  args.push(...(VCODEC[ext] ?? []), ...(audio ? [] : ['-an']), '-g', String(fps), ...(o.extra ?? []), p);
  ff(args);
  return p;
}

/**
 * The first half of 1 s of 64×48 testsrc with a sine tone, written with ffmpeg's own defaults for the
 * container `name` names (`extra`: output options): a file that probes as what it is and ends inside its
 * media data. With these defaults half an MKV holds no whole frame (ffmpeg: "Cannot determine format of
 * input stream 0:0 after EOF"); makeVideo's ultrafast encoding, cut the same way, still decodes.
 */
export function halfClip(dir: string, name: string, extra: string[] = []): Buffer {
  const p = path.join(dir, name);
  ff([
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=64x48:rate=10:duration=1',
    '-f',
    'lavfi',
    '-i',
    'sine=duration=1',
    '-pix_fmt',
    'yuv420p',
    ...extra,
    p,
  ]);
  const whole = readFileSync(p);
  return whole.subarray(0, whole.length >> 1);
}

/** A small grey video whose sound is `audio` (speech for auto-subtitles), as long as the audio. */
export function videoWithSound(dir: string, name: string, audio: string, durationS: number): string {
  const p = path.join(dir, name);
  ff([
    '-f',
    'lavfi',
    '-i',
    `color=c=gray:s=160x120:r=10:d=${durationS.toFixed(2)}`,
    '-i',
    audio,
    '-shortest',
    '-c:v',
    'libx264',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    p,
  ]);
  return p;
}

export type AudioKind = 'sine' | 'chirp-up' | 'left-only' | 'noisy-sine' | 'noise';

/** A small audio file. chirp-up rises from 200 Hz to 2000 Hz; left-only has a tone on the left and silence on the right. */
export function makeAudio(
  dir: string,
  name: string,
  o: { kind?: AudioKind; durationS?: number; freq?: number; channels?: 1 | 2; rate?: number; volume?: number; extra?: string[] } = {},
): string {
  const { kind = 'sine', durationS = 2, freq = 440, channels = 2, rate = 44100, volume = 0.5 } = o;
  const p = path.join(dir, name);
  let src: string;
  if (kind === 'sine') src = `aevalsrc=${volume}*sin(2*PI*${freq}*t):s=${rate}:d=${durationS}`;
  else if (kind === 'chirp-up') src = `aevalsrc=${volume}*sin(2*PI*(200*t+900*t*t/${durationS})):s=${rate}:d=${durationS}`;
  else if (kind === 'left-only') src = `aevalsrc=${volume}*sin(2*PI*${freq}*t)|0:s=${rate}:d=${durationS}`;
  else if (kind === 'noise') src = `anoisesrc=a=${volume}:c=white:r=${rate}:d=${durationS}:seed=7`;
  else
    src = `aevalsrc=${volume}*sin(2*PI*${freq}*t):s=${rate}:d=${durationS}[a];anoisesrc=a=0.05:c=white:r=${rate}:d=${durationS}:seed=7[b];[a][b]amix=inputs=2:normalize=0[out0]`;
  const ch = kind === 'left-only' ? [] : ['-ac', String(channels)];
  ff(['-f', 'lavfi', '-i', src, ...ch, ...(o.extra ?? []), p]);
  return p;
}

/** espeak-ng speech, then `gapS` of digital silence, then speech again (WAV, mono 22 kHz). */
export function makeSpeechWithGap(dir: string, name: string, gapS = 1.5): string {
  const speech = path.join(dir, `speech-${name}.wav`);
  execFileSync('espeak-ng', ['-w', speech, 'hello there, this is a test']);
  const p = path.join(dir, name);
  ff([
    '-i',
    speech,
    '-i',
    speech,
    '-filter_complex',
    `[0:a]aresample=22050,apad=pad_dur=${gapS}[a];[1:a]aresample=22050[b];[a][b]concat=n=2:v=0:a=1[o]`,
    '-map',
    '[o]',
    p,
  ]);
  return p;
}

export function makeSrt(dir: string, name: string, cues: { start: number; end: number; text: string }[]): string {
  const t = (s: number) => {
    const ms = Math.round(s * 1000);
    const h = Math.floor(ms / 3600000);
    const m = Math.floor((ms % 3600000) / 60000);
    const sec = Math.floor((ms % 60000) / 1000);
    return `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}:${String(sec).padStart(2, '0')},${String(ms % 1000).padStart(3, '0')}`;
  };
  const p = path.join(dir, name);
  writeFileSync(p, cues.map((c, i) => `${i + 1}\n${t(c.start)} --> ${t(c.end)}\n${c.text}\n`).join('\n'));
  return p;
}

// ---------------------------------------------------------------------------------------------
// Read-backs

export interface Probed {
  format: { duration: string; format_name: string; tags?: Record<string, string> };
  streams: {
    codec_type: string;
    codec_name: string;
    pix_fmt?: string;
    width?: number;
    height?: number;
    avg_frame_rate?: string;
    r_frame_rate?: string;
    sample_rate?: string;
    channels?: number;
    channel_layout?: string;
    bits_per_raw_sample?: string;
    color_transfer?: string;
    color_primaries?: string;
    nb_read_frames?: string;
    nb_frames?: string;
    tags?: Record<string, string>;
    disposition?: Record<string, number>;
  }[];
}

/** A 0.6 s 32×24 MKV (H.264) with one SRT subtitle track: the track AVI cannot hold. */
export function mkvWithSubtitles(dir: string, name: string): string {
  const srt = makeSrt(dir, `${name}.srt`, [{ start: 0, end: 0.5, text: 'Hi' }]);
  const p = path.join(dir, name);
  execFileSync('ffmpeg', [
    ...['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=s=32x24:r=5:d=0.6', '-i', srt],
    ...['-map', '0', '-map', '1', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:s', 'srt', p],
  ]);
  return p;
}

/** An animated PNG of ffmpeg's test pattern: `frames` frames of `delayMs` each, looping `plays` times (0 = for ever). */
export function makeApng(
  dir: string,
  name: string,
  o: { width: number; height: number; frames: number; delayMs: number; plays: number },
): string {
  const p = path.join(dir, name);
  const rate = 1000 / o.delayMs;
  execFileSync('ffmpeg', [
    ...['-v', 'error', '-y', '-f', 'lavfi', '-i', `testsrc=size=${o.width}x${o.height}:rate=${rate}:duration=${o.frames / rate}`],
    ...['-plays', String(o.plays), '-f', 'apng', p],
  ]);
  return p;
}

export function ffprobe(file: string, countFrames = false): Probed {
  const out = execFileSync('ffprobe', [
    '-v',
    'error',
    '-print_format',
    'json',
    '-show_format',
    '-show_streams',
    ...(countFrames ? ['-count_frames'] : []),
    file,
  ]);
  return JSON.parse(out.toString()) as Probed;
}

export const duration = (file: string) => Number(ffprobe(file).format.duration);
export const stream = (p: Probed, type: 'video' | 'audio' | 'subtitle') => p.streams.find((s) => s.codec_type === type);
export function fps(p: Probed): number {
  const [a, b] = (stream(p, 'video')!.avg_frame_rate ?? '0/1').split('/').map(Number);
  return a! / b!;
}

/** Decoded frame count of the first video stream. */
export function frameCount(file: string): number {
  return Number(stream(ffprobe(file, true), 'video')!.nb_read_frames);
}

/** Integrated loudness (LUFS) measured by ffmpeg's ebur128 filter. */
export function integratedLufs(file: string): number {
  const r = spawnSync('ffmpeg', ['-hide_banner', '-nostats', '-i', file, '-map', '0:a:0', '-af', 'ebur128', '-f', 'null', '-'], {
    encoding: 'utf8',
  });
  const m = /Integrated loudness:\s+I:\s+(-?[\d.]+) LUFS/.exec(r.stderr);
  if (!m) throw new Error('no ebur128 summary: ' + r.stderr.slice(-500));
  return Number(m[1]);
}

/** Mean volume (dB) of the audio, optionally after a filter (e.g. pan to one channel). */
export function meanVolumeDb(file: string, filter = 'anull'): number {
  const r = spawnSync(
    'ffmpeg',
    ['-hide_banner', '-nostats', '-i', file, '-map', '0:a:0', '-af', `${filter},volumedetect`, '-f', 'null', '-'],
    { encoding: 'utf8' },
  );
  const m = /mean_volume:\s+(-?[\d.]+|-inf) dB/.exec(r.stderr);
  if (!m) throw new Error('no volumedetect: ' + r.stderr.slice(-500));
  return m[1] === '-inf' ? -Infinity : Number(m[1]);
}

/** Mono 16-bit samples of [start, start+len] at `rate`. */
export function samples(file: string, start = 0, len?: number, rate = 44100): Int16Array {
  const args = [
    '-v',
    'error',
    '-ss',
    String(start),
    '-i',
    file,
    ...(len ? ['-t', String(len)] : []),
    '-map',
    '0:a:0',
    '-ac',
    '1',
    '-ar',
    String(rate),
    '-f',
    's16le',
    'pipe:1',
  ];
  const buf = execFileSync('ffmpeg', args, { maxBuffer: 64 * 1024 * 1024 });
  return new Int16Array(buf.buffer, buf.byteOffset, Math.floor(buf.length / 2));
}

/** Dominant frequency estimated from zero crossings (good for clean sines). */
export function zeroCrossingHz(file: string, start = 0, len = 0.5, rate = 44100): number {
  const s = samples(file, start, len, rate);
  let crossings = 0;
  for (let i = 1; i < s.length; i++) if ((s[i - 1]! < 0 && s[i]! >= 0) || (s[i - 1]! >= 0 && s[i]! < 0)) crossings++;
  return crossings / 2 / (s.length / rate);
}

/** One decoded RGB frame at time t. */
export function frameRgb(file: string, t: number): { width: number; height: number; data: Buffer } {
  const v = stream(ffprobe(file), 'video')!;
  const data = execFileSync(
    'ffmpeg',
    ['-v', 'error', '-ss', String(t), '-i', file, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  return { width: v.width!, height: v.height!, data };
}

/** Mean absolute difference per channel between two same-size frames, over rows [y0, y1). */
export function frameDiff(a: { width: number; data: Buffer }, b: { data: Buffer }, y0 = 0, y1?: number): number {
  const rowBytes = a.width * 3;
  const end = (y1 ?? a.data.length / rowBytes) * rowBytes;
  let sum = 0;
  for (let i = y0 * rowBytes; i < end; i++) sum += Math.abs(a.data[i]! - b.data[i]!);
  return sum / (end - y0 * rowBytes);
}

// ---------------------------------------------------------------------------------------------
// Running a tool

export interface RunResult {
  /** The output copied out of the workspace (kept until the suite's temp dir goes). */
  path: string;
  name: string;
  /** The content type the daemon would answer with. */
  contentType?: string;
  data?: Record<string, unknown>;
  progress: number[];
}

let n = 0;

export async function runMedia(
  dir: string,
  toolId: string,
  files: string[],
  settings: Record<string, unknown> = {},
  o: { extra?: Record<string, string[]>; signal?: AbortSignal; workDir?: (d: string) => void } = {},
): Promise<RunResult> {
  const ws = await createWorkspace();
  o.workDir?.(ws.dir);
  const progress: number[] = [];
  try {
    const extra: Record<string, Awaited<ReturnType<typeof inputFile>>[]> = {};
    for (const [k, v] of Object.entries(o.extra ?? {})) extra[k] = await Promise.all(v.map((p) => inputFile(p)));
    const out = await runTool(getTool(toolId), { files: await Promise.all(files.map((f) => inputFile(f))), extra }, settings, {
      workDir: ws.dir,
      dataDir: dir,
      signal: o.signal,
      onProgress: (p) => progress.push(p),
    });
    if (!out.output) return { path: '', name: '', data: out.data, progress };
    const dest = path.join(dir, `out-${++n}-${out.output.name}`);
    copyFileSync(out.output.path, dest);
    return { path: dest, name: out.output.name, contentType: out.output.contentType, data: out.data, progress };
  } finally {
    await ws.dispose();
  }
}
