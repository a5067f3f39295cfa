import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { probeAudio } from '../../audio/_shared/audio-input.js';
import { transcodeAudio } from '../../audio/_shared/transcode-audio.js';

export default defineTool({
  id: 'extract-audio',
  section: 'video',
  group: 'video',
  summary: "Save a video's audio track as MP3, WAV, M4A or OGG; base tool of the video-to-audio presets.",
  description: 'MP3 (LAME 192 kbit/s), WAV (16-bit PCM), M4A (AAC 192 kbit/s) or OGG (Vorbis 192 kbit/s) of the first audio track.',
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
