import { KilnError } from '../../../core/errors.js';
import type { InputFile, RunContext } from '../../../core/tool.js';
import { audioDataEnd, type MediaInfo, type MediaStream, probe } from '../../../engines/ffmpeg/probe.js';

/** Probes a tool's audio input: an audio stream is required. */
export async function probeAudio(file: InputFile, signal?: AbortSignal): Promise<MediaInfo & { audio: MediaStream }> {
  const info = await probe(file.path, { signal, name: file.name });
  if (!info.audio) throw new KilnError('UNSUPPORTED_INPUT', `${file.name} has no audio stream.`, { reason: 'no-audio-stream' });
  return info as MediaInfo & { audio: MediaStream };
}

/**
 * probeAudio for a tool that places something from the end (a fade-out, equal parts): the duration is
 * where the data end when that is earlier than the header claims (a truncated file: audioDataEnd), and the
 * run says so. Placed by the claim, a fade-out fell after the last sample and was never heard, and the
 * last of the equal parts held nothing.
 */
export async function probeAudioLength(ctx: RunContext, file: InputFile): Promise<MediaInfo & { audio: MediaStream }> {
  const info = await probeAudio(file, ctx.signal);
  if (!(info.duration > 0)) return info;
  const end = await audioDataEnd(file.path, info.duration, { signal: ctx.signal });
  if (end !== undefined && end > 0 && end < info.duration - 0.1) {
    ctx.warn(
      `${file.name} claims ${info.duration.toFixed(2)} s but its audio ends at ${end.toFixed(2)} s (a truncated file?): ${end.toFixed(2)} s is its length here.`,
    );
    return { ...info, duration: end };
  }
  return info;
}
