/** Encoder and muxer arguments: the codec choices every media tool shares, per container and quality. */
import type { AudioFormat, VideoContainer } from './containers.js';
import { FFMPEG_THREADS } from './slots.js';

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

/**
 * H.264 in 4:2:0 (and vidstab) refuses odd sides ("width not divisible by 2"): this crop drops the last
 * column and/or row of an odd-sized frame (101x75 -> 100x74) and is a no-op for even ones. Cropping rather
 * than scaling keeps every other pixel as it was; sides round down to even as `even()` does elsewhere.
 */
export const EVEN_SIDES_FILTER = 'crop=trunc(iw/2)*2:trunc(ih/2)*2:0:0';

/** The filter a video must pass through before this container's encoder (H.264 ones), or undefined (VP9, MPEG-4 take odd sides). */
export function evenSidesFilter(container: VideoContainer): string | undefined {
  return container === 'webm' || container === 'avi' ? undefined : EVEN_SIDES_FILTER;
}

/** A -vf chain with the container's even-sides crop appended when its encoder needs it. */
export function withEvenSides(container: VideoContainer, vf?: string): string | undefined {
  const even = evenSidesFilter(container);
  return [vf, even].filter((f) => !!f).join(',') || undefined;
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

/** PCM codecs a WAV keeps as they are; any other (8-bit, A-law…) is written as 16-bit. */
const DEEP_PCM = new Set(['pcm_s24le', 'pcm_s32le', 'pcm_f32le', 'pcm_f64le']);

/** The PCM codec of a WAV written from one in `inputCodec`: its own sample depth when deeper than 16-bit. */
export function wavPcmFor(inputCodec: string | undefined): string {
  return inputCodec && DEEP_PCM.has(inputCodec) ? inputCodec : 'pcm_s16le';
}

/** The PCM codec that holds samples decoded as `sampleFormat` without loss (an intermediate WAV). */
export function pcmHolding(sampleFormat: string | undefined): string {
  const f = sampleFormat?.replace(/p$/, '');
  if (f === 's32' || f === 's64') return 'pcm_s32le';
  if (f === 'flt') return 'pcm_f32le';
  if (f === 'dbl') return 'pcm_f64le';
  return 'pcm_s16le';
}

/**
 * Encoder args for an audio file format (bitrate only matters for lossy formats). `keepCodec` is the
 * input's codec when the output keeps the input's own format: a WAV then keeps its sample depth, an ALAC
 * M4A stays lossless ALAC instead of becoming AAC, and an OGG or WebM keeps Opus or Vorbis, whichever it
 * holds. Without it a WAV is 16-bit, an M4A is AAC, an OGG Vorbis and a WebM Opus.
 */
export function audioCodecArgs(format: AudioFormat | 'm4r', kbps = 192, keepCodec?: string): string[] {
  const opus = ['-c:a', 'libopus', '-b:a', `${Math.min(kbps, 256)}k`];
  const vorbis = ['-c:a', 'libvorbis', '-q:a', vorbisQuality(kbps).toFixed(2)];
  switch (format) {
    case 'mp3':
      return ['-c:a', 'libmp3lame', '-b:a', `${kbps}k`];
    case 'wav':
      return ['-c:a', wavPcmFor(keepCodec)];
    case 'flac':
      return ['-c:a', 'flac'];
    case 'ogg':
      return keepCodec === 'opus' ? opus : vorbis;
    case 'webm':
      return keepCodec === 'vorbis' ? vorbis : opus;
    case 'opus':
      return opus;
    case 'm4a':
    case 'm4r':
      if (keepCodec === 'alac') return ['-c:a', 'alac', ...muxArgs(format)];
      return ['-c:a', 'aac', '-b:a', `${kbps}k`, ...muxArgs(format)];
  }
}

/** Codecs that lose nothing: their bitrate says nothing about what a lossy copy of them needs. */
const LOSSLESS_CODEC = /^(pcm_|flac$|alac$|wavpack$|ape$|tta$|mlp$|truehd$)/;

/**
 * The bitrate (kbit/s) of a lossy re-encode the user named none for. A lossy source keeps about its own
 * (rounded up to 8 kbit/s, never under the encoder's useful floor: 16 for Opus, 32 for the others, nor over
 * 320, MP3's most, or 160 per channel): a 64 kbit/s voice note stays near 64 rather than tripling at a fixed
 * 192, and a 320 kbit/s MP3 is not cut to 192. A lossless source or one of unknown bitrate gets 192 for
 * stereo, 64 per channel beyond that (384 for 5.1).
 */
export function reencodeKbps(
  format: AudioFormat | 'm4r',
  source: { codec?: string; channels?: number; kbps?: number },
  keepCodec?: string,
): number {
  const channels = Math.max(1, source.channels ?? 2);
  const fallback = Math.max(192, 64 * channels);
  if (!source.kbps || !(source.kbps > 0) || LOSSLESS_CODEC.test(source.codec ?? '')) return fallback;
  const opus = format === 'opus' || (format === 'webm' && keepCodec !== 'vorbis') || (format === 'ogg' && keepCodec === 'opus');
  const floor = opus ? 16 : 32;
  const ceiling = format === 'mp3' ? 320 : Math.max(320, 160 * channels);
  return Math.min(ceiling, Math.max(floor, Math.ceil(source.kbps / 8) * 8));
}

/** libvorbis's quality levels and their nominal bitrates (kbit/s, 44.1 kHz stereo). */
const VORBIS_LEVELS: [number, number][] = [
  [-1, 45],
  [0, 64],
  [1, 80],
  [2, 96],
  [3, 112],
  [4, 128],
  [5, 160],
  [6, 192],
  [7, 224],
  [8, 256],
  [9, 320],
  [10, 500],
];

/**
 * The Vorbis quality level whose nominal bitrate is `kbps`. Vorbis is encoded by quality, not -b:a:
 * libvorbis's managed-bitrate mode accepts only a narrow band of bitrates per sample rate and channel
 * count ("encoder setup failed" for 192k at 8 kHz, any bitrate at 96 kHz, 320k mono, 32k stereo),
 * while every quality level works at every rate.
 */
export function vorbisQuality(kbps: number): number {
  if (kbps <= VORBIS_LEVELS[0]![1]) return VORBIS_LEVELS[0]![0];
  for (let i = 1; i < VORBIS_LEVELS.length; i++) {
    const [q1, k1] = VORBIS_LEVELS[i]!;
    const [q0, k0] = VORBIS_LEVELS[i - 1]!;
    if (kbps <= k1) return q0 + ((q1 - q0) * (kbps - k0)) / (k1 - k0);
  }
  return 10;
}
