import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { probeAudio } from '../../audio/_shared/audio-input.js';
import { transcodeAudio } from '../../audio/_shared/transcode-audio.js';

export default defineTool({
  id: 'extract-audio',
  section: 'video',
  group: 'video',
  summary: "Save a video's audio track as MP3, WAV, M4A or OGG; base tool of the video-to-audio presets.",
  description:
    "MP3 (LAME), WAV (16-bit PCM), M4A (AAC) or OGG (Vorbis) of the first audio track; lossy formats at about the bitrate of the video's own sound (192 kbit/s from lossless sound, 32 at least, 320 at most).",
  input: { kind: 'file', accept: ['video/*'] },
  settings: z.object({
    format: z.enum(['mp3', 'wav', 'm4a', 'ogg']).default('mp3').describe('Audio format.'),
  }),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'audio (MP3, WAV, M4A or OGG)',
  examples: ['clip.mp4 -o clip.mp3', 'clip.mp4 --format wav -o clip.wav'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const info = await probeAudio(input, ctx.signal);
    return transcodeAudio(ctx, input, info, { format: s.format, stage: 'extracting' });
  },
});
