/**
 * Speech to text for transcribe-audio and auto-subtitles. Two engines:
 * - Whisper base through whisper.cpp (the `transcription` bundle), any language, `auto` detects;
 * - pocketsphinx with its US English model (Debian packages, not part of the bundle), used only when
 *   the bundle is missing and the language is English (or `auto`, then assumed English), with a
 *   warning that it is far weaker. Its results never claim to be Whisper's: `engine` and `model`
 *   say what ran.
 * Audio streams through in chunks (pcm.ts), so memory stays flat however long the input is.
 */
import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { KilnError } from '../../core/errors.js';
import { exec } from '../../core/process.js';
import { probe } from '../../engines/ffmpeg/probe.js';
import { requireEngine } from '../../engines/registry.js';
import { missingBundles } from '../features.js';
import { readInstalled } from '../install/layout.js';
import { WHISPER_MODEL_FILE, type WhisperOutput } from '../models/whisper.js';
import { runModel } from '../run-model.js';
import { type PcmChunk, pcmChunks } from './pcm.js';
import type { Segment } from './subtitles.js';

export { TRANSCRIPTION_LANGUAGES, type TranscriptionLanguage } from './transcription-settings.js';
import type { TranscriptionLanguage } from './transcription-settings.js';

export const POCKETSPHINX_MODEL_DIR = '/usr/share/pocketsphinx/model/en-us';

export interface TranscribeOptions {
  toolId: string;
  dataDir: string;
  language: TranscriptionLanguage;
  signal?: AbortSignal;
  /** fraction 0-1 of the whole transcription. */
  progress?: (fraction: number, stage: string) => void;
  /** A private scratch directory (pocketsphinx reads each chunk from a file there). */
  workDir: string;
  /** Chunking (tests use shorter windows to exercise the cuts on short audio). */
  windowS?: number;
}

export interface Transcript {
  engine: 'whisper.cpp' | 'pocketsphinx';
  /** whisper-base, whisper-custom-64x1… (by what the file declares), or cmusphinx-en-us. */
  model: string;
  /** Whisper only: the bundle file that ran and the SHA-256 recorded when it was installed. */
  modelFile?: { name: string; sha256: string };
  language: string;
  /** False when the language was assumed, not detected. */
  languageDetected: boolean;
  durationS: number;
  segments: Segment[];
  words: number;
  chunks: number;
  device: 'cpu' | 'cuda';
  warnings: string[];
  /** Wall time of the recognition, ms (the model load included). */
  elapsedMs: number;
}

function notInstalled(toolId: string, why: string): KilnError {
  return new KilnError(
    'FEATURE_NOT_INSTALLED',
    `${toolId}: ${why} It needs the feature bundle transcription (Whisper), not installed. ` +
      `Install it with \`kiln features install ${toolId}\` (or as an admin POST /api/v1/admin/tools/${toolId}/features/install); ` +
      'on a machine without internet, export it where it installs (`kiln features export transcription -o FILE`) and import it here with `kiln features import FILE`.',
    {
      details: {
        tool: toolId,
        missingBundles: ['transcription'],
        install: {
          cli: `kiln features install ${toolId}`,
          http: `POST /api/v1/admin/tools/${toolId}/features/install`,
          import: 'kiln features import FILE',
        },
      },
    },
  );
}

async function pocketsphinxAvailable(): Promise<boolean> {
  if (!existsSync(`${POCKETSPHINX_MODEL_DIR}/en-us/mdef`)) return false;
  return requireEngine('pocketsphinx').then(
    () => true,
    () => false,
  );
}

/** Which engine serves this request, or FEATURE_NOT_INSTALLED saying what to install. */
export async function chooseEngine(o: Pick<TranscribeOptions, 'toolId' | 'dataDir' | 'language'>): Promise<'whisper' | 'pocketsphinx'> {
  if (!(await missingBundles(o.dataDir, ['transcription'])).length) return 'whisper';
  if (o.language !== 'en' && o.language !== 'auto') {
    throw notInstalled(
      o.toolId,
      `Transcribing language "${o.language}" needs the Whisper model (the built-in fallback knows US English only).`,
    );
  }
  if (!(await pocketsphinxAvailable())) {
    throw notInstalled(
      o.toolId,
      'No speech model is installed (neither Whisper nor the pocketsphinx English fallback: apt-get install pocketsphinx pocketsphinx-en-us).',
    );
  }
  return 'pocketsphinx';
}

const keep = (c: PcmChunk, s: Segment) => {
  const mid = (s.start + s.end) / 2;
  return mid >= c.keepFromS && mid < c.keepToS;
};

async function whisperChunk(c: PcmChunk, language: string, o: TranscribeOptions, onFraction: (f: number) => void) {
  const { output, info } = await runModel<WhisperOutput>(
    'whisper-base',
    { pcm: c.pcm, language },
    { dataDir: o.dataDir, signal: o.signal, progress: (f) => onFraction(f) },
  );
  const segments = output.segments
    .map((s) => ({
      start: Math.min(c.endS, c.startS + s.t0 / 1000),
      end: Math.min(c.endS, c.startS + s.t1 / 1000),
      text: s.text.trim(),
    }))
    .filter((s) => s.text && keep(c, s));
  return { segments, language: output.language, device: info.device, model: output.model };
}

interface Word {
  start: number;
  end: number;
  word: string;
}

/** pocketsphinx_continuous `-time yes` lines: `word start end confidence`; fillers and markers dropped. */
export function parsePocketsphinx(out: string, offsetS: number): Word[] {
  const words: Word[] = [];
  for (const line of out.split('\n')) {
    const m = /^(\S+) (\d+\.\d+) (\d+\.\d+) (\S+)$/.exec(line.trim());
    if (!m) continue;
    const w = m[1]!.replace(/\(\d+\)$/, '');
    if (/^(<.*>|\[.*\]|\+\+.*\+\+)$/.test(w)) continue;
    words.push({ word: w, start: offsetS + Number(m[2]), end: offsetS + Number(m[3]) });
  }
  return words;
}

/** Words into subtitle-sized segments: a new one at a pause of 0.6 s, after 6 s or 80 characters. */
export function groupWords(words: Word[]): Segment[] {
  const out: Segment[] = [];
  let cur: Segment | undefined;
  for (const w of words) {
    if (cur && (w.start - cur.end >= 0.6 || w.end - cur.start > 6 || cur.text.length + w.word.length > 80)) {
      out.push(cur);
      cur = undefined;
    }
    if (!cur) cur = { start: w.start, end: w.end, text: w.word };
    else {
      cur.end = w.end;
      cur.text += ` ${w.word}`;
    }
  }
  if (cur) out.push(cur);
  return out;
}

async function pocketsphinxChunk(c: PcmChunk, o: TranscribeOptions): Promise<Word[]> {
  // A file, not stdin: Node's child stdin is a socket, which pocketsphinx cannot open as -infile.
  const raw = path.join(o.workDir, `chunk-${c.index}.raw`);
  await writeFile(raw, c.pcm);
  let stdout: string;
  try {
    ({ stdout } = await exec(
      'pocketsphinx_continuous',
      [
        '-infile',
        raw,
        '-time',
        'yes',
        '-logfn',
        '/dev/null',
        '-hmm',
        `${POCKETSPHINX_MODEL_DIR}/en-us`,
        '-lm',
        `${POCKETSPHINX_MODEL_DIR}/en-us.lm.bin`,
        '-dict',
        `${POCKETSPHINX_MODEL_DIR}/cmudict-en-us.dict`,
      ],
      { signal: o.signal, timeoutMs: 300_000 },
    ));
  } finally {
    await rm(raw, { force: true });
  }
  return parsePocketsphinx(stdout, c.startS).filter((w) => {
    const mid = (w.start + w.end) / 2;
    return mid >= c.keepFromS && mid < c.keepToS;
  });
}

export async function transcribe(file: string, o: TranscribeOptions): Promise<Transcript> {
  const engine = await chooseEngine(o);
  const info = await probe(file, { signal: o.signal });
  if (!info.audio) throw new KilnError('UNSUPPORTED_INPUT', 'The input has no audio track to transcribe.');
  const durationS = info.duration;
  const t0 = performance.now();
  const warnings: string[] = [];
  let language: string = o.language;
  let languageDetected = false;
  let device: 'cpu' | 'cuda' = 'cpu';
  const segments: Segment[] = [];
  const words: Word[] = [];
  let chunks = 0;
  let model = engine === 'whisper' ? 'whisper' : 'cmusphinx-en-us';
  // Chunks overlap, so a chunk starts before the previous one ended: progress never goes back.
  let done = 0;
  const report = (c: PcmChunk, f: number) => {
    const total = durationS > 0 ? durationS : c.endS;
    done = Math.max(done, Math.min(1, (c.startS + f * (c.endS - c.startS)) / total));
    o.progress?.(done, `transcribing ${Math.round(c.startS)} s`);
  };
  for await (const c of pcmChunks(file, { signal: o.signal, windowS: o.windowS })) {
    chunks++;
    report(c, 0);
    if (engine === 'whisper') {
      const r = await whisperChunk(c, language, o, (f) => report(c, f));
      // The language detected on the first chunk holds for the rest: chunks do not switch language.
      if (language === 'auto') {
        language = r.language;
        languageDetected = true;
      }
      device = r.device;
      model = r.model;
      segments.push(...r.segments);
    } else {
      words.push(...(await pocketsphinxChunk(c, o)));
    }
    report(c, 1);
  }
  if (engine === 'pocketsphinx') {
    segments.push(...groupWords(words));
    warnings.push(
      'Transcribed by pocketsphinx (US English), the fallback used while the Whisper model is not installed: expect many wrong words. Install the transcription bundle for Whisper quality.',
    );
    if (o.language === 'auto') warnings.push('Language detection needs the Whisper model; the speech was assumed to be English.');
    language = 'en';
  }
  // Chunks overlap by a second: a long segment kept by one chunk may start after the first kept by the next.
  segments.sort((a, b) => a.start - b.start);
  // An empty transcript (silence, music, a 0.2 s clip) is an answer, but not one to give without a word.
  if (!segments.length) warnings.push(`No speech was found in the ${Math.round(durationS * 10) / 10} s of audio: the transcript is empty.`);
  const text = segments.map((s) => s.text).join(' ');
  const installed = engine === 'whisper' ? (await readInstalled(o.dataDir, 'bundle', 'transcription'))?.files : undefined;
  const modelFile = installed?.find((f) => f.name === WHISPER_MODEL_FILE);
  return {
    engine: engine === 'whisper' ? 'whisper.cpp' : 'pocketsphinx',
    model,
    ...(modelFile && { modelFile: { name: modelFile.name, sha256: modelFile.sha256 } }),
    language,
    languageDetected,
    durationS: Math.round(durationS * 1000) / 1000,
    segments,
    words: engine === 'pocketsphinx' ? words.length : text.split(/\s+/).filter(Boolean).length,
    chunks,
    device,
    warnings,
    elapsedMs: Math.round(performance.now() - t0),
  };
}
