/**
 * Whisper through whisper.cpp (runtime `whisper`): 16 kHz mono signed 16-bit PCM of at most 30 s in
 * (one chunk; the task streams long audio through in chunks), segments with times in ms relative to
 * the chunk out, and the language whisper decoded in (detected when asked for `auto`).
 */
import { KilnError } from '../../core/errors.js';
import { defineModel } from '../model.js';
import { aiThreads } from '../threads.js';
import { readGgmlWhisperHeader, whisperModelName } from './whisper-ggml.js';

export interface WhisperInput {
  /** 16 kHz mono s16le samples. */
  pcm: Int16Array;
  /** ISO 639-1 code, or 'auto' to detect. */
  language: string;
}

export interface WhisperSegment {
  /** ms from the chunk's start. */
  t0: number;
  t1: number;
  text: string;
}

export interface WhisperOutput {
  /** The model that ran, by the shape its file declares (whisper-ggml.ts), e.g. whisper-base. */
  model: string;
  language: string;
  segments: WhisperSegment[];
}

interface TranscribeHandle {
  stop(): Promise<void>;
  promise: Promise<{ language?: string; segments: WhisperSegment[]; isAborted: boolean }>;
}

interface WhisperContext {
  transcribeData(pcm: ArrayBuffer, options: Record<string, unknown>): TranscribeHandle;
  release(): Promise<void>;
}

interface Loaded {
  ctx: WhisperContext;
  name: string;
}

export interface WhisperModule {
  WhisperContext: new (o: { filePath: string; useGpu?: boolean }) => WhisperContext;
}

/** KILN_WHISPER_CHUNK_TIMEOUT_S: longest wait for one chunk (default 600 s). */
function watchdogMs(env: NodeJS.ProcessEnv = process.env): number {
  const s = Number(env.KILN_WHISPER_CHUNK_TIMEOUT_S);
  return (Number.isFinite(s) && s > 0 ? s : 600) * 1000;
}

/**
 * Settles when the chunk running now on `ctx` has ended, which its own promise never says after a
 * stop or a failure: the binding runs one transcription at a time on a context (a lock), so a 10 ms
 * one queued now starts right after, and whisper.cpp answers it at once (under 100 ms of audio, no
 * language to detect). It clears the context's results, which nobody reads after a stop. Queued
 * only once the chunk is given up: queued earlier it could clear a chunk's results before the
 * binding reads them.
 */
function chunkEnd(ctx: WhisperContext): Promise<unknown> {
  try {
    return ctx.transcribeData(new Int16Array(160).buffer, { language: 'en', maxThreads: 1, temperature: 0 }).promise;
  } catch (e) {
    return Promise.reject(e);
  }
}

function whisper(id: string, file: string) {
  return defineModel<WhisperInput, WhisperOutput, Loaded>({
    id,
    bundle: 'transcription',
    runtime: 'whisper',
    files: [file],
    async load(ctx) {
      const mod = ctx.runtime as WhisperModule;
      const failed = (why: string) =>
        new KilnError(
          'FEATURE_NOT_INSTALLED',
          `The Whisper model ${file} could not be loaded (${why}): reinstall the transcription bundle with \`kiln features install transcription\`, or import it with \`kiln features import FILE\`.`,
          { reason: 'model-load' },
        );
      const header = await readGgmlWhisperHeader(ctx.file(file)).catch((e: Error) => {
        throw failed(e.message);
      });
      if (!header) throw failed('not a whisper.cpp ggml file');
      try {
        // whisper.cpp reads the whole file here and refuses a truncated or misshapen one.
        return { ctx: await new mod.WhisperContext({ filePath: ctx.file(file), useGpu: false }), name: whisperModelName(header) };
      } catch (e) {
        throw failed((e as Error).message);
      }
    },
    async predict(loaded, input, ctx) {
      ctx.signal.throwIfAborted();
      const pcm = input.pcm;
      const buf =
        pcm.byteOffset === 0 && pcm.byteLength === pcm.buffer.byteLength
          ? (pcm.buffer as ArrayBuffer)
          : (pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.byteLength) as ArrayBuffer);
      const handle = loaded.ctx.transcribeData(buf, {
        language: input.language,
        maxThreads: aiThreads().threads,
        temperature: 0,
        onProgress: (p: number) => ctx.progress(Math.min(1, p / 100), 'transcribing'),
      });
      // @fugood/whisper.node 1.1.3 settles its promise only on success: on a failure or a stop its
      // worker calls back with the error alone, and the promise, which waits for two arguments,
      // stays pending for ever (seen with a model whose vocabulary lacks " ", which whisper.cpp
      // looks up). And stop() only raises a flag that whisper.cpp does not read mid-chunk (no abort
      // callback): the chunk runs to its end in the background. So an abort answers at once, and a
      // watchdog gives up after far longer than a 30 s chunk takes on a CPU; either way the chunk
      // still running is handed to the host (abandon), which keeps the worker until it ends.
      let timer: NodeJS.Timeout | undefined;
      let onAbort: (() => void) | undefined;
      let abandoned = false;
      const abandon = () => {
        if (abandoned) return;
        abandoned = true;
        void handle.stop().catch(() => {});
        ctx.linger?.(chunkEnd(loaded.ctx));
      };
      const guard = new Promise<never>((_, reject) => {
        onAbort = () => {
          abandon();
          reject(new KilnError('CANCELLED', 'The run was cancelled.'));
        };
        ctx.signal.addEventListener('abort', onAbort, { once: true });
        timer = setTimeout(() => {
          abandon();
          reject(
            new KilnError(
              'INTERNAL',
              `whisper.cpp gave no answer within ${Math.round(watchdogMs() / 1000)} s for one chunk: the transcription failed inside whisper.cpp (which reports no reason) or the CPU is far too slow for this model (KILN_WHISPER_CHUNK_TIMEOUT_S sets the limit).`,
              { reason: 'whisper-stalled' },
            ),
          );
        }, watchdogMs());
      });
      try {
        const r = await Promise.race([handle.promise, guard]);
        ctx.signal.throwIfAborted();
        return {
          model: loaded.name,
          language: r.language || input.language,
          segments: r.segments.map((s) => ({ t0: s.t0, t1: s.t1, text: s.text })),
        };
      } finally {
        clearTimeout(timer);
        if (onAbort) ctx.signal.removeEventListener('abort', onAbort);
      }
    },
    async dispose(loaded) {
      await loaded.ctx.release();
    },
  });
}

export const WHISPER_MODEL_FILE = 'ggml-base.bin';
export const whisperBase = whisper('whisper-base', WHISPER_MODEL_FILE);
