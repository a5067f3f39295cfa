/** The transcription tools' settings values, kept apart so a tool's module loads nothing heavy. */
export const TRANSCRIPTION_LANGUAGES = ['auto', 'en', 'de', 'fr', 'es', 'zh', 'ja', 'ko', 'id', 'th', 'vi'] as const;
export type TranscriptionLanguage = (typeof TRANSCRIPTION_LANGUAGES)[number];

export const FALLBACK_NOTE =
  'Without the transcription bundle, English (and `auto`, then assumed English) runs on pocketsphinx, a far weaker US English model, and the result says so; other languages need the bundle.';
