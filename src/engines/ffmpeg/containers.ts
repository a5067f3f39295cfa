/** The output container or audio format kiln writes for an input's own type. */

export type VideoContainer = 'mp4' | 'mov' | 'webm' | 'avi' | 'mkv';
export type AudioFormat = 'mp3' | 'wav' | 'ogg' | 'flac' | 'm4a' | 'opus' | 'webm';

/** The container an output keeps for a "same as input" tool: the input's own when kiln writes it, else MP4. */
export function videoContainerOf(ext: string | undefined): VideoContainer {
  if (ext === 'mov' || ext === 'webm' || ext === 'avi' || ext === 'mkv' || ext === 'mp4') return ext;
  return 'mp4';
}

/** Streams can be copied as they are when the output keeps the input's own container. */
export function keepsContainer(ext: string | undefined): boolean {
  return videoContainerOf(ext) === ext;
}

/**
 * Same for audio: MP4 and MOV given to an audio tool come out as M4A, a WebM stays WebM (an audio-only WebM
 * is a common recording: Opus sound, which Vorbis OGG would re-encode into another codec), an MKV as OGG.
 */
export function audioFormatOf(ext: string | undefined): AudioFormat {
  if (ext === 'mp3' || ext === 'wav' || ext === 'ogg' || ext === 'flac' || ext === 'm4a' || ext === 'opus' || ext === 'webm') return ext;
  if (ext === 'aac' || ext === 'mp4' || ext === 'mov') return 'm4a';
  if (ext === 'mkv') return 'ogg';
  return 'mp3';
}
