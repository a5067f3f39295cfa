import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { probeAudio } from '../_shared/audio-input.js';
import { transcodeAudio } from '../_shared/transcode-audio.js';

export default defineTool({
  id: 'convert-audio',
  section: 'audio',
  group: 'audio',
  summary: 'Convert audio to MP3, WAV, OGG, FLAC or M4A at a bitrate; base tool of the audio presets.',
  description:
    'MP3 (LAME) and M4A (AAC) use bitrateKbps; OGG (Vorbis) is encoded at the quality level whose nominal bitrate it is (any sample rate works); WAV (16-bit PCM) and FLAC are lossless and ignore it.',
  input: { kind: 'file', accept: ['audio/*'] },
  settings: z.object({
    format: z.enum(['mp3', 'wav', 'ogg', 'flac', 'm4a']).default('mp3').describe('Output format.'),
    bitrateKbps: z.int().min(32).max(320).default(192).describe('Bitrate for lossy formats.'),
  }),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'audio (MP3, WAV, OGG, FLAC or M4A)',
  examples: ['song.wav -o song.mp3', 'song.mp3 --format ogg --bitrate-kbps 128 -o song.ogg'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const info = await probeAudio(input, ctx.signal);
    return transcodeAudio(ctx, input, info, { format: s.format, kbps: s.bitrateKbps, stage: 'converting' });
  },
});
