/**
 * What a whisper.cpp model file says about itself: the hyper-parameters at the head of the legacy
 * ggml format, and from them the Whisper size it has (tiny … large-v3) or none. Results name the
 * model from this, not from the bundle's name for the file, so a file that is not Whisper base is
 * never reported as Whisper base.
 */
import { readHead } from '../../core/read-head.js';

export const GGML_MAGIC = 0x67676d6c;

export interface GgmlWhisperHeader {
  nVocab: number;
  nAudioCtx: number;
  nAudioState: number;
  nAudioHead: number;
  nAudioLayer: number;
  nTextCtx: number;
  nTextState: number;
  nTextHead: number;
  nTextLayer: number;
  nMels: number;
  ftype: number;
}

/** The header of a ggml Whisper file, or undefined when the file does not start like one. */
export async function readGgmlWhisperHeader(file: string): Promise<GgmlWhisperHeader | undefined> {
  const b = await readHead(file, 48);
  if (b.length < 48 || b.readUInt32LE(0) !== GGML_MAGIC) return undefined;
  const v = (i: number) => b.readInt32LE(4 + i * 4);
  return {
    nVocab: v(0),
    nAudioCtx: v(1),
    nAudioState: v(2),
    nAudioHead: v(3),
    nAudioLayer: v(4),
    nTextCtx: v(5),
    nTextState: v(6),
    nTextHead: v(7),
    nTextLayer: v(8),
    nMels: v(9),
    ftype: v(10),
  };
}

/** OpenAI's published sizes: width and layers (the same on both sides). */
const SIZES: [name: string, state: number, layers: number][] = [
  ['tiny', 384, 4],
  ['base', 512, 6],
  ['small', 768, 12],
  ['medium', 1024, 24],
  ['large', 1280, 32],
];

/**
 * `whisper-<size>[.en]` for a file with the shape of a published Whisper model (large-v3 by its
 * vocabulary and 128 mel bands), else `whisper-custom-<state>x<layers>`: a converted fine-tune or a
 * test model, named by its shape and never by a published name.
 */
export function whisperModelName(h: GgmlWhisperHeader): string {
  const size = SIZES.find(
    ([, state, layers]) => h.nAudioState === state && h.nTextState === state && h.nAudioLayer === layers && h.nTextLayer === layers,
  );
  const standard = h.nAudioCtx === 1500 && h.nTextCtx === 448;
  if (standard && h.nAudioState === 1280 && h.nAudioLayer === 32 && h.nTextLayer === 4 && h.nVocab === 51866 && h.nMels === 128)
    return 'whisper-large-v3-turbo';
  if (size && standard) {
    const [name] = size;
    if (h.nVocab === 51864 && h.nMels === 80 && name !== 'large') return `whisper-${name}.en`;
    if (h.nVocab === 51865 && h.nMels === 80) return `whisper-${name}`;
    if (h.nVocab === 51866 && h.nMels === 128 && name === 'large') return 'whisper-large-v3';
  }
  return `whisper-custom-${h.nAudioState}x${h.nAudioLayer}`;
}
