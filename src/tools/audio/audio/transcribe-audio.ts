import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { FALLBACK_NOTE, TRANSCRIPTION_LANGUAGES } from '../../../ai/tasks/transcription-settings.js';

export default defineTool({
  id: 'transcribe-audio',
  section: 'audio',
  group: 'audio',
  summary: 'Transcribe speech to plain text or subtitles.',
  description:
    'Whisper base through whisper.cpp (the transcription bundle): any of the listed languages, `auto` detects it; txt, or srt/vtt cues with times from the start of the file. Long audio streams through in 30 s chunks cut in pauses. ' +
    FALLBACK_NOTE,
  input: { kind: 'file', accept: ['audio/*'] },
  settings: z.object({
    language: z.enum(TRANSCRIPTION_LANGUAGES).default('auto').describe('Spoken language.'),
    outputFormat: z.enum(['txt', 'srt', 'vtt']).default('txt').describe('Transcript format.'),
  }),
  needs: { engines: ['ffmpeg', 'ffprobe'], bundles: ['transcription'], bundleFallback: FALLBACK_NOTE },
  execution: 'long',
  output: 'transcript: txt, srt or vtt',
  examples: ['talk.mp3 -o talk.txt', 'interview.wav --language de --output-format srt -o interview.srt'],
  async run(ctx, { files }, s) {
    const { transcriptTool } = await import('../../../ai/tasks/transcript-tool.js');
    return transcriptTool(ctx, 'transcribe-audio', files[0]!.path, s.language, s.outputFormat);
  },
});
