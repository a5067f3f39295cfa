/**
 * Audio as 16 kHz mono signed 16-bit PCM, streamed from ffmpeg in chunks of at most 30 s (Whisper's
 * window) that overlap by a second, so long audio never sits in memory as one buffer. Each cut is
 * placed at the quietest 100 ms in the last seconds of the window (a pause, where one exists), and a
 * chunk's results are kept only between its two cuts: the overlap lets a word at a cut be heard whole
 * by both chunks, and the midpoint rule keeps it exactly once.
 */
import { KilnError } from '../../core/errors.js';
import { startChild, tail } from '../../core/process.js';

export const SAMPLE_RATE = 16_000;

export interface PcmChunk {
  /** Samples of [startS, endS) of the input. */
  pcm: Int16Array;
  startS: number;
  endS: number;
  /** Results whose midpoint lies in [keepFromS, keepToS) belong to this chunk. */
  keepFromS: number;
  keepToS: number;
  index: number;
}

export interface ChunkOptions {
  /** Longest chunk, seconds (default 30: Whisper's window). */
  windowS?: number;
  /** Overlap on each side of a cut, seconds (default 1). */
  overlapS?: number;
  /** How far before the window's end a cut is searched for, seconds (default 5). */
  searchS?: number;
  signal?: AbortSignal;
}

/** Index of the quietest 100 ms frame's centre in `pcm[from, to)`. */
function quietestCut(pcm: Int16Array, from: number, to: number): number {
  const frame = SAMPLE_RATE / 10;
  let best = to;
  let bestEnergy = Number.POSITIVE_INFINITY;
  for (let f = from; f + frame <= to; f += frame / 2) {
    let e = 0;
    for (let i = f; i < f + frame; i += 4) e += pcm[i]! * pcm[i]!;
    if (e < bestEnergy) {
      bestEnergy = e;
      best = f + frame / 2;
    }
  }
  return best;
}

/**
 * Yields the input's audio in chunks. ffmpeg decodes any audio or video file; its output is read as
 * it comes (backpressure keeps ffmpeg at most one pipe buffer ahead).
 */
export async function* pcmChunks(file: string, opts: ChunkOptions = {}): AsyncGenerator<PcmChunk> {
  const windowS = opts.windowS ?? 30;
  const overlapS = opts.overlapS ?? 1;
  const searchS = Math.min(opts.searchS ?? 5, windowS / 2);
  const win = Math.round(windowS * SAMPLE_RATE);
  const ov = Math.round(overlapS * SAMPLE_RATE);
  const child = startChild(
    'ffmpeg',
    [
      '-nostdin',
      '-v',
      'error',
      '-i',
      file,
      '-map',
      '0:a:0',
      '-vn',
      '-ac',
      '1',
      '-ar',
      String(SAMPLE_RATE),
      '-f',
      's16le',
      '-acodec',
      'pcm_s16le',
      '-',
    ],
    { env: process.env },
  );
  child.stdin.on('error', () => undefined);
  child.stdin.end();
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => {
    stderr = (stderr + b.toString('utf8')).slice(-8192);
  });
  const exited = new Promise<number>((resolve, reject) => {
    child.on('error', (e: NodeJS.ErrnoException) =>
      reject(e.code === 'ENOENT' ? new KilnError('ENGINE_MISSING', 'ffmpeg is not installed. Run `kiln doctor`.') : e),
    );
    child.on('close', (code, sig) => resolve(code ?? (sig ? 128 : -1)));
  });
  exited.catch(() => {});
  const onAbort = () => child.kill('SIGKILL');
  opts.signal?.addEventListener('abort', onAbort, { once: true });

  // buf holds samples from `base` (absolute sample index) on; at most one window plus one read.
  let buf = new Int16Array(win * 2);
  let len = 0;
  let base = 0;
  /** Absolute sample where the current chunk's kept range starts (the previous cut). */
  let keepFrom = 0;
  let index = 0;
  let odd: Buffer | undefined;
  try {
    for await (const data of child.stdout as AsyncIterable<Buffer>) {
      let bytes = odd ? Buffer.concat([odd, data]) : data;
      odd = undefined;
      if (bytes.length % 2) {
        odd = bytes.subarray(bytes.length - 1);
        bytes = bytes.subarray(0, bytes.length - 1);
      }
      const n = bytes.length / 2;
      if (len + n > buf.length) {
        const bigger = new Int16Array(Math.max(buf.length * 2, len + n));
        bigger.set(buf.subarray(0, len));
        buf = bigger;
      }
      for (let i = 0; i < n; i++) buf[len + i] = bytes.readInt16LE(i * 2);
      len += n;
      while (len >= win) {
        // Cut in a pause near the window's end, leaving room for the overlap after it.
        const lo = Math.max(keepFrom - base + ov + SAMPLE_RATE, win - ov - Math.round(searchS * SAMPLE_RATE));
        const cut = quietestCut(buf, lo, win - ov);
        const end = Math.min(len, cut + ov);
        yield {
          pcm: buf.slice(0, end),
          startS: base / SAMPLE_RATE,
          endS: (base + end) / SAMPLE_RATE,
          keepFromS: keepFrom / SAMPLE_RATE,
          keepToS: (base + cut) / SAMPLE_RATE,
          index: index++,
        };
        keepFrom = base + cut;
        const drop = cut - ov;
        buf.copyWithin(0, drop, len);
        len -= drop;
        base += drop;
      }
    }
    const code = await exited;
    opts.signal?.throwIfAborted();
    if (code !== 0) {
      throw new KilnError('UNSUPPORTED_INPUT', `ffmpeg could not decode the audio (exit ${code}): ${tail(stderr) || 'no message'}`);
    }
    if (len > 0 && (index === 0 || base + len > keepFrom)) {
      yield {
        pcm: buf.slice(0, len),
        startS: base / SAMPLE_RATE,
        endS: (base + len) / SAMPLE_RATE,
        keepFromS: keepFrom / SAMPLE_RATE,
        keepToS: Number.POSITIVE_INFINITY,
        index: index++,
      };
    }
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}
