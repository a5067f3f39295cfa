import { KilnError } from '../../../core/errors.js';
import type { InputFile } from '../../../core/tool.js';
import { type MediaInfo, type MediaStream, probe } from '../../../engines/ffmpeg/probe.js';

/** Probes a tool's audio input: an audio stream is required. */
export async function probeAudio(file: InputFile, signal?: AbortSignal): Promise<MediaInfo & { audio: MediaStream }> {
  const info = await probe(file.path, { signal, name: file.name });
  if (!info.audio) throw new KilnError('UNSUPPORTED_INPUT', `${file.name} has no audio stream.`, { reason: 'no-audio-stream' });
  return info as MediaInfo & { audio: MediaStream };
}
