/**
 * A real whisper.cpp model file, tiny: the legacy ggml layout whisper.cpp's loader reads (magic,
 * hyper-parameters, mel filters, vocabulary, then every tensor with its dims, name and data), with the
 * exact tensor names and shapes of the Whisper architecture but a 64-wide state and one layer on each
 * side, and deterministic random weights. whisper.cpp loads it, computes the mel spectrogram, runs
 * the encoder and decodes (arbitrary) tokens with timestamps, as with a real model: the loader, the
 * chunking and the timestamps of kiln's Whisper path run for real, in well under a second per chunk.
 *
 * n_vocab 51865 makes it a multilingual model (whisper.cpp derives the special tokens and the 99
 * language tokens from it); the 50257 text tokens are written as readable syllables, and the loader
 * adds the special ones itself, as it does for the published models. n_text_ctx is 64 (448 in the
 * published models): whisper.cpp decodes at most n_text_ctx/2 tokens per window. Weights are f32
 * (ftype 0): the published files' f16 matrices run slower in the prebuilt addon, for no gain here.
 */
import { mkdir, rename, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { mulberry32 } from '../../src/ai/classical/patchmatch/completion.js';
import { GGML_MAGIC, type GgmlWhisperHeader } from '../../src/ai/models/whisper-ggml.js';

/** The header fields of kiln's own reader; ftype 0: every tensor f32; 1: matrices f16, vectors and positional embeddings f32 (as the published files). */
export type WhisperHparams = GgmlWhisperHeader & { ftype: 0 | 1 };

export const TINY_HPARAMS: WhisperHparams = {
  nVocab: 51865,
  nAudioCtx: 1500,
  nAudioState: 64,
  nAudioHead: 2,
  nAudioLayer: 1,
  nTextCtx: 64,
  nTextState: 64,
  nTextHead: 2,
  nTextLayer: 1,
  nMels: 80,
  ftype: 0,
};

const N_FFT = 201; // 1 + 400/2: whisper.cpp's 25 ms window at 16 kHz
const TEXT_TOKENS = 50257;

/** IEEE half from a float (round to nearest; the weights here are small and normal). */
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
function toHalf(v: number): number {
  f32[0] = v;
  const x = u32[0]!;
  const sign = (x >>> 16) & 0x8000;
  const exp = ((x >>> 23) & 0xff) - 127 + 15;
  const mant = x & 0x7fffff;
  if (exp <= 0) return sign; // below the half range: zero
  if (exp >= 31) return sign | 0x7c00;
  const h = sign | (exp << 10) | (mant >>> 13);
  return mant & 0x1000 ? h + 1 : h;
}

/** Triangular filters on the mel scale over the 201 FFT bins, each summing to one. */
function melFilters(nMels: number): Float32Array {
  const mel = (hz: number) => 2595 * Math.log10(1 + hz / 700);
  const hz = (m: number) => 700 * (10 ** (m / 2595) - 1);
  const top = mel(8000);
  const edges = Array.from({ length: nMels + 2 }, (_, i) => hz((top * i) / (nMels + 1)));
  const out = new Float32Array(nMels * N_FFT);
  for (let m = 0; m < nMels; m++) {
    const [lo, mid, hi] = [edges[m]!, edges[m + 1]!, edges[m + 2]!];
    let sum = 0;
    for (let k = 0; k < N_FFT; k++) {
      const f = (k * 8000) / (N_FFT - 1);
      const w = f <= lo || f >= hi ? 0 : f <= mid ? (f - lo) / (mid - lo) : (hi - f) / (hi - mid);
      out[m * N_FFT + k] = w;
      sum += w;
    }
    // A filter narrower than one bin gets that bin, so no mel band is silent.
    if (sum === 0) out[m * N_FFT + Math.min(N_FFT - 1, Math.round((mid * (N_FFT - 1)) / 8000))] = 1;
    else for (let k = 0; k < N_FFT; k++) out[m * N_FFT + k]! /= sum;
  }
  return out;
}

const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'su', 'ta', 'ri', 'po', 've', 'du', 'fa', 'ho', 'ji', 'be', 'zu', 'wa'];

/**
 * Text token i as ASCII. As in GPT-2's vocabulary (which Whisper's extends), the first 94 are the
 * printable characters and 220 is a lone space: whisper.cpp looks " " up by its text when it
 * suppresses blank output, and fails the whole transcription without it. The others are syllable
 * words, a leading space on two in three (word starts).
 */
function tokenText(i: number, blank: boolean): string {
  if (i < 94) return String.fromCharCode(33 + i);
  if (i === 220 && blank) return ' ';
  let s = '';
  let n = i + 1;
  while (n > 0) {
    s += SYLLABLES[n % SYLLABLES.length];
    n = Math.floor(n / SYLLABLES.length);
  }
  return i % 3 ? ` ${s}` : s;
}

interface Tensor {
  name: string;
  /** ggml order: ne[0] is the fastest-varying dimension (PyTorch's shape reversed). */
  ne: number[];
  kind: 'weight' | 'bias' | 'norm' | 'embedding';
}

/** The tensors whisper.cpp's loader creates for these hyper-parameters, by name and ggml shape. */
export function tensorList(h: WhisperHparams): Tensor[] {
  const s = h.nAudioState;
  const t = h.nTextState;
  const out: Tensor[] = [
    { name: 'encoder.positional_embedding', ne: [s, h.nAudioCtx], kind: 'embedding' },
    { name: 'encoder.conv1.weight', ne: [3, h.nMels, s], kind: 'weight' },
    { name: 'encoder.conv1.bias', ne: [1, s], kind: 'bias' },
    { name: 'encoder.conv2.weight', ne: [3, s, s], kind: 'weight' },
    { name: 'encoder.conv2.bias', ne: [1, s], kind: 'bias' },
  ];
  const attn = (prefix: string, n: number) => [
    { name: `${prefix}.query.weight`, ne: [n, n], kind: 'weight' as const },
    { name: `${prefix}.query.bias`, ne: [n], kind: 'bias' as const },
    { name: `${prefix}.key.weight`, ne: [n, n], kind: 'weight' as const },
    { name: `${prefix}.value.weight`, ne: [n, n], kind: 'weight' as const },
    { name: `${prefix}.value.bias`, ne: [n], kind: 'bias' as const },
    { name: `${prefix}.out.weight`, ne: [n, n], kind: 'weight' as const },
    { name: `${prefix}.out.bias`, ne: [n], kind: 'bias' as const },
  ];
  const norm = (name: string, n: number): Tensor[] => [
    { name: `${name}.weight`, ne: [n], kind: 'norm' },
    { name: `${name}.bias`, ne: [n], kind: 'bias' },
  ];
  const mlp = (prefix: string, n: number): Tensor[] => [
    ...norm(`${prefix}.mlp_ln`, n),
    { name: `${prefix}.mlp.0.weight`, ne: [n, 4 * n], kind: 'weight' },
    { name: `${prefix}.mlp.0.bias`, ne: [4 * n], kind: 'bias' },
    { name: `${prefix}.mlp.2.weight`, ne: [4 * n, n], kind: 'weight' },
    { name: `${prefix}.mlp.2.bias`, ne: [n], kind: 'bias' },
  ];
  for (let i = 0; i < h.nAudioLayer; i++) {
    const b = `encoder.blocks.${i}`;
    out.push(...norm(`${b}.attn_ln`, s), ...attn(`${b}.attn`, s), ...mlp(b, s));
  }
  out.push(...norm('encoder.ln_post', s));
  out.push(
    { name: 'decoder.positional_embedding', ne: [t, h.nTextCtx], kind: 'embedding' },
    { name: 'decoder.token_embedding.weight', ne: [t, h.nVocab], kind: 'embedding' },
  );
  for (let i = 0; i < h.nTextLayer; i++) {
    const b = `decoder.blocks.${i}`;
    out.push(
      ...norm(`${b}.attn_ln`, t),
      ...attn(`${b}.attn`, t),
      ...norm(`${b}.cross_attn_ln`, t),
      ...attn(`${b}.cross_attn`, t),
      ...mlp(b, t),
    );
  }
  out.push(...norm('decoder.ln', t));
  return out;
}

const TOKEN_BEG = 50364; // <|0.00|> in a multilingual vocabulary of 51865

/**
 * A steering channel, so the random decoder decodes the way a trained one does instead of looping
 * until whisper.cpp gives up: the final layer norm's channel 0 is a constant 1 (weight 0, bias 1) and
 * the output projection (the token embedding) reads it as a per-token bias. Timestamps get a bias
 * growing with their time, so decoding pairs timestamps around words and moves forward to the end of
 * the audio; the other channels are scaled by 2.5 so the greedy pass is confident (whisper.cpp
 * otherwise falls back through five more temperatures with five decoders each: 10× slower).
 */
function steer(x: Tensor, k: number): number | undefined {
  if (x.name === 'decoder.ln.weight') return k === 0 ? 0 : 2.5;
  if (x.name === 'decoder.ln.bias') return k === 0 ? 1 : 0;
  if (x.name === 'decoder.token_embedding.weight' && k % x.ne[0]! === 0) {
    const token = k / x.ne[0]!;
    return token >= TOKEN_BEG ? 8 + 0.004 * (token - TOKEN_BEG) : 0;
  }
  return undefined;
}

/** f16 for matrices when ftype is 1, except the positional embeddings (whisper.cpp reads those as f32). */
function isHalf(h: WhisperHparams, x: Tensor): boolean {
  return h.ftype === 1 && x.ne.length >= 2 && x.kind !== 'bias' && !x.name.endsWith('positional_embedding');
}

/**
 * The model file's bytes; the same seed and hyper-parameters always give the same bytes. Without
 * `blankToken` the vocabulary lacks " ": whisper.cpp then loads the model but fails every
 * transcription (a model that loads and cannot transcribe).
 */
export function buildWhisperModel(h: WhisperHparams = TINY_HPARAMS, seed = 14, opts: { blankToken?: boolean } = {}): Buffer {
  const rand = mulberry32(seed);
  const parts: Buffer[] = [];
  const ints = (...v: number[]) => {
    const b = Buffer.alloc(4 * v.length);
    for (const [i, x] of v.entries()) b.writeInt32LE(x, i * 4);
    parts.push(b);
  };
  ints(GGML_MAGIC, h.nVocab, h.nAudioCtx, h.nAudioState, h.nAudioHead, h.nAudioLayer);
  ints(h.nTextCtx, h.nTextState, h.nTextHead, h.nTextLayer, h.nMels, h.ftype);
  ints(h.nMels, N_FFT);
  parts.push(Buffer.from(melFilters(h.nMels).buffer));
  ints(TEXT_TOKENS);
  for (let i = 0; i < TEXT_TOKENS; i++) {
    const w = Buffer.from(tokenText(i, opts.blankToken ?? true), 'ascii');
    ints(w.length);
    parts.push(w);
  }
  for (const x of tensorList(h)) {
    const n = x.ne.reduce((a, b) => a * b, 1);
    const half = isHalf(h, x);
    const name = Buffer.from(x.name, 'ascii');
    ints(x.ne.length, name.length, half ? 1 : 0, ...x.ne);
    parts.push(name);
    // Scaled like a trained network's (layer norms at one, small weights), so activations stay finite.
    const scale = x.kind === 'embedding' ? 0.5 : x.kind === 'weight' ? 1 / Math.sqrt(x.ne[0]! * (x.ne.length === 3 ? x.ne[1]! : 1)) : 0.02;
    let k = -1;
    const value = () => {
      k++;
      return steer(x, k) ?? (x.kind === 'norm' ? 1 : (rand() * 2 - 1) * scale * Math.sqrt(3));
    };
    if (half) {
      const b = Buffer.alloc(n * 2);
      for (let i = 0; i < n; i++) b.writeUInt16LE(toHalf(value()), i * 2);
      parts.push(b);
    } else {
      const f = new Float32Array(n);
      for (let i = 0; i < n; i++) f[i] = value();
      parts.push(Buffer.from(f.buffer));
    }
  }
  return Buffer.concat(parts);
}

/**
 * The tiny model as a file, built once per machine and kept in the shared test cache
 * (KILN_AI_CACHE_DIR, as the runtime tarballs), named by its seed and shape.
 */
export async function tinyWhisperModelFile(): Promise<string> {
  const dir = path.join(process.env.KILN_AI_CACHE_DIR ?? path.join(tmpdir(), 'kiln-ai-cache'), 'test-models');
  const h = TINY_HPARAMS;
  const file = path.join(dir, `ggml-tiny-test-s${h.nAudioState}-l${h.nAudioLayer}-f${h.ftype}-v2.bin`);
  const have = await stat(file).catch(() => undefined);
  if (have) return file;
  await mkdir(dir, { recursive: true });
  const part = `${file}.${process.pid}.part`;
  await writeFile(part, buildWhisperModel(h));
  await rename(part, file);
  return file;
}
