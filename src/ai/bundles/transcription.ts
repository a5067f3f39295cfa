import { defineBundle } from './manifest.js';

/**
 * Whisper base (multilingual, 74 M parameters) in whisper.cpp's ggml format, from the
 * ggerganov/whisper.cpp model repository on Hugging Face, pinned to an immutable revision. Upstream
 * publishes its SHA-1 only (whisper.cpp's models/README.md and download script), so the download is
 * verified by that SHA-1 and the exact size, and the SHA-256 is computed and recorded at install.
 * Base, not base.en: `language auto` needs the multilingual model; tiny (75 MiB) was judged too weak
 * for subtitles, small (466 MiB) too large for a default download.
 *
 * The bundle is "installed" only with this model: the pocketsphinx fallback (Debian, US English,
 * far weaker) is a system engine, not part of the bundle, and a result it produces names it as the
 * engine (docs/AI.md, "Transcription").
 */
export const WHISPER_REVISION = '5359861c739e955e79d9a303bcbc70fb988958b1';

export default defineBundle({
  id: 'transcription',
  version: '1.0.0',
  title: 'Speech-to-text (Whisper base, whisper.cpp)',
  licence: 'MIT',
  licenceNote: 'Whisper weights: MIT (OpenAI); ggml conversion and whisper.cpp: MIT (ggml authors).',
  runtimes: ['whisper'],
  files: [
    {
      name: 'ggml-base.bin',
      size: 147_951_465,
      sha256: null,
      sha1: '465707469ff3a37a2b9b8d8f89f2f99de7299dac',
      source: { kind: 'url', url: `https://huggingface.co/ggerganov/whisper.cpp/resolve/${WHISPER_REVISION}/ggml-base.bin` },
    },
  ],
  tools: ['transcribe-audio', 'auto-subtitles'],
});
