/**
 * Which audio and subtitle streams of an input an output container can carry, and how: a conversion
 * keeps every audio track and every subtitle track the target can hold (text subtitles re-encoded to the
 * container's own text format), and names each one it has to drop.
 */
import type { VideoContainer } from './containers.js';
import type { MediaInfo, MediaStream } from './probe.js';

/** Text subtitle codecs: any of them converts to any other text format. */
const TEXT_SUBTITLES = new Set(['subrip', 'srt', 'ass', 'ssa', 'mov_text', 'webvtt', 'text']);
/** Picture subtitles Matroska carries as they are. */
const MKV_BITMAP_SUBTITLES = new Set(['dvd_subtitle', 'hdmv_pgs_subtitle', 'dvb_subtitle']);

export interface KeptStreams {
  /** `-map` and per-stream `-c:s:N` arguments for the audio and subtitle streams (the video map excluded). */
  args: string[];
  audioCount: number;
  /** One sentence per stream left out, saying why. */
  dropped: string[];
}

/**
 * `subtitlesLeftOut`: every subtitle track is left out for this reason (a retimed or reversed video,
 * whose cue times would no longer match the picture).
 */
export function keptStreams(info: MediaInfo, container: VideoContainer, opts: { subtitlesLeftOut?: string } = {}): KeptStreams {
  const audio = info.streams.filter((s) => s.type === 'audio');
  const args = audio.flatMap((s) => ['-map', `0:${s.index}`]);
  const dropped: string[] = [];
  let n = 0;
  for (const s of info.subtitles) {
    const codec = opts.subtitlesLeftOut ? { drop: opts.subtitlesLeftOut } : subtitleCodec(s, container);
    if ('drop' in codec) {
      dropped.push(`subtitle stream ${s.index} (${s.codec}) left out: ${codec.drop}`);
      continue;
    }
    args.push('-map', `0:${s.index}`, `-c:s:${n++}`, codec.encoder);
  }
  // Fonts (and other files) attached to an MKV: the ASS subtitles kept above are drawn with them.
  for (const s of info.streams.filter((x) => x.type === 'attachment')) {
    const what = `attachment stream ${s.index} (${s.tags.filename ?? s.codec})`;
    if (container === 'mkv') args.push('-map', `0:${s.index}`);
    else dropped.push(`${what} left out: only MKV holds attached files`);
  }
  return { args, audioCount: audio.length, dropped };
}

/**
 * `-map` arguments that copy an MKV's attached files (fonts of its ASS subtitles) into an MKV output; none for
 * other containers. `stripped`: the run drops metadata (-map_metadata -1), which would take the attachments'
 * own tags too, and Matroska refuses an attachment without its filename ("has no filename tag"): their tags
 * are copied back. Given the input's info, since a per-stream -map_metadata that matches no stream is an error.
 */
export function attachmentMaps(container: VideoContainer, stripped?: MediaInfo): string[] {
  if (container !== 'mkv') return [];
  const keepTags = stripped?.streams.some((s) => s.type === 'attachment') ? ['-map_metadata:s:t', '0:s:t'] : [];
  return ['-map', '0:t?', ...keepTags];
}

function subtitleCodec(s: MediaStream, container: VideoContainer): { encoder: string } | { drop: string } {
  const text = TEXT_SUBTITLES.has(s.codec);
  switch (container) {
    case 'mp4':
    case 'mov':
      return text ? { encoder: 'mov_text' } : { drop: `${container.toUpperCase()} holds only text subtitles` };
    case 'webm':
      return text ? { encoder: 'webvtt' } : { drop: 'WebM holds only WebVTT text subtitles' };
    case 'mkv':
      if (s.codec === 'mov_text' || s.codec === 'text') return { encoder: 'srt' };
      return text || MKV_BITMAP_SUBTITLES.has(s.codec) ? { encoder: 'copy' } : { drop: `MKV takes no ${s.codec} subtitles` };
    case 'avi':
      return { drop: 'AVI holds no subtitle tracks' };
  }
}

/** Audio formats whose muxer stores cover art (ID3 APIC, FLAC PICTURE, MP4 covr), and the picture codecs they take. */
const COVER_FORMATS = new Set(['mp3', 'flac', 'm4a', 'm4r']);
const COVER_CODECS = new Set(['mjpeg', 'png']);

/**
 * The cover art (attached pictures) of an audio input, copied into an output of `format` (an audio
 * file extension) where it can hold it; each picture left out is named, with why. `args` replace
 * `-vn`: they map the pictures after the audio. `inputIndex` is the input's place on the command line.
 */
export function keptCoverArt(info: MediaInfo, format: string, inputIndex = 0): { args: string[]; dropped: string[] } {
  const args: string[] = [];
  const dropped: string[] = [];
  let n = 0;
  for (const s of info.streams.filter((x) => x.type === 'video' && x.attachedPic)) {
    const why = !COVER_FORMATS.has(format)
      ? `${format.toUpperCase()} holds no cover art`
      : !COVER_CODECS.has(s.codec)
        ? `${format.toUpperCase()} takes only JPEG or PNG cover art`
        : undefined;
    if (why) {
      dropped.push(`cover art (stream ${s.index}, ${s.codec}) left out: ${why}`);
      continue;
    }
    args.push('-map', `${inputIndex}:${s.index}`, `-c:v:${n}`, 'copy', `-disposition:v:${n}`, 'attached_pic');
    n++;
  }
  return { args: args.length ? args : ['-vn'], dropped };
}
