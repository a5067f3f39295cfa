/**
 * The ffmpeg demuxer for a sniffed input type. Audio, video and subtitle containers only: images keep
 * ffmpeg's own choice (image2 options such as -loop would not apply to a forced png_pipe), and types
 * not listed are probed as before, still inside `-protocol_whitelist file,pipe`.
 */
import { sniffedKind } from '../../core/sniffed-kinds.js';

const DEMUXERS: Record<string, string> = {
  mp4: 'mov',
  m4a: 'mov',
  m4v: 'mov',
  mov: 'mov',
  qt: 'mov',
  '3gp': 'mov',
  '3g2': 'mov',
  f4v: 'mov',
  webm: 'matroska',
  mkv: 'matroska',
  mka: 'matroska',
  avi: 'avi',
  flv: 'flv',
  mpg: 'mpeg',
  mpeg: 'mpeg',
  mts: 'mpegts',
  m2ts: 'mpegts',
  ts: 'mpegts',
  asf: 'asf',
  wmv: 'asf',
  wma: 'asf',
  wav: 'wav',
  mp3: 'mp3',
  flac: 'flac',
  ogg: 'ogg',
  oga: 'ogg',
  ogv: 'ogg',
  opus: 'ogg',
  aac: 'aac',
  aif: 'aiff',
  aiff: 'aiff',
  amr: 'amr',
  caf: 'caf',
  ac3: 'ac3',
  gif: 'gif',
  srt: 'srt',
  vtt: 'webvtt',
  ass: 'ass',
  ssa: 'ass',
};

/**
 * `['-f', demuxer]` for the input `args[i + 1]` (args[i] is its `-i`) when runTool sniffed its type and
 * the caller gave no `-f` among that input's options; else `[]`.
 */
export function demuxerArgs(args: readonly string[], i: number): string[] {
  for (let j = i - 1; j >= 0 && args[j] !== '-i' && args[j - 1] !== '-i'; j--) if (args[j] === '-f') return [];
  const kind = args[i + 1] === undefined ? undefined : sniffedKind(args[i + 1]!);
  const demuxer = kind && DEMUXERS[kind.ext];
  return demuxer ? ['-f', demuxer] : [];
}
