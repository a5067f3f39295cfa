import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { FALLBACK_NOTE, TRANSCRIPTION_LANGUAGES } from '../../../ai/tasks/transcription-settings.js';

export default defineTool({
  id: 'auto-subtitles',
  section: 'video',
  group: 'video',
  summary: "Generate subtitles by transcribing a video's audio track.",
  description:
    'ffmpeg takes the first audio track (streamed, never extracted whole), Whisper base transcribes it (the transcription bundle) and the cues are written as SRT or WebVTT. Burn them in with burn-subtitles or add them as a track with embed-subtitles. ' +
    FALLBACK_NOTE,
  input: { kind: 'file', accept: ['video/*'] },
  settings: z.object({
    language: z.enum(TRANSCRIPTION_LANGUAGES).default('auto').describe('Spoken language.'),
    format: z.enum(['srt', 'vtt']).default('srt').describe('Subtitle format.'),
  }),
  needs: { engines: ['ffmpeg', 'ffprobe'], bundles: ['transcription'], bundleFallback: FALLBACK_NOTE },
  execution: 'long',
  output: 'subtitles: srt or vtt',
  examples: ['clip.mp4 -o clip.srt', 'clip.mp4 --language en --format vtt -o clip.vtt'],
  async run(ctx, { files }, s) {
    const { transcriptTool } = await import('../../../ai/tasks/transcript-tool.js');
    return transcriptTool(ctx, 'auto-subtitles', files[0]!.path, s.language, s.format);
  },
});
