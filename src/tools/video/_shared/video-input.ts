import { KilnError } from '../../../core/errors.js';
import { MAX_INPUT_PIXELS } from '../../../core/limits.js';
import type { InputFile } from '../../../core/tool.js';
import { type MediaInfo, type MediaStream, probe } from '../../../engines/ffmpeg/probe.js';

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
