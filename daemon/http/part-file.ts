/**
 * How an uploaded file part is read: written to its file (writePart: tool runs, uploads.ts, and the file
 * library, library/upload.ts) or handed over chunk by chunk for a copy into memory (eachChunk). To a file,
 * one write at a time (the loop waits for each: back-pressure). stream.pipeline through a counting
 * Transform into a write stream cost a 64×64 request ~0.5-0.7 ms of the daemon's CPU (rotate 8.0-8.1 →
 * 7.3-7.6 ms a request, three interleaved pairs; the main thread's share ~0.25 ms); on Node 20 pipeline
 * also ends every call by aborting its own AbortController, whose DOMException captures a stack.
 */
import { open } from 'node:fs/promises';
import { finished, type Readable } from 'node:stream';

/**
 * Writes `part` to `file`. `take` sees each chunk first: it may throw (a limit), or return false to
 * count a chunk without writing it. Leaving early (`take` threw, the file could not be made, a write
 * failed) destroys the part, as pipeline did: busboy would otherwise wait on a part nobody reads.
 */
export async function writePart(part: Readable, file: string, take: (chunk: Buffer) => boolean): Promise<void> {
  const out = await open(file, 'w').catch((e: unknown) => {
    part.destroy();
    throw e;
  });
  try {
    for await (const chunk of part as AsyncIterable<Buffer>) {
      if (!take(chunk)) continue;
      // write() may take part of a chunk (a disk filling up); the rest goes next, or fails.
      for (let done = 0; done < chunk.length; ) done += (await out.write(chunk, done)).bytesWritten;
    }
  } finally {
    await out.close();
  }
}

/**
 * Hands each chunk of `part` to `take` as it arrives and resolves at its end: for a part copied into
 * memory, where no write waits. Its 'data' events rather than `for await`, whose promise and microtask a
 * chunk cost a 6.9 MB upload ~0.5 ms of the main thread (busboy read to the end: 2.1–2.5 → 1.6–1.9 ms,
 * bench/fixtures' 4000×3000 photo in 64 kB chunks) and garbage for V8's helper threads to collect (the
 * daemon resizing that photo on 2 connections: 5.7–6.3 → 3.8–4.3 ms of their CPU a request). A throw of
 * `take` (a limit) destroys the part, as leaving the loop did, and is the answer; so is the part's own
 * error (the body cut short).
 */
export function eachChunk(part: Readable, take: (chunk: Buffer) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    let thrown: { e: unknown } | undefined;
    const onData = (chunk: Buffer) => {
      try {
        take(chunk);
      } catch (e) {
        thrown = { e };
        part.off('data', onData);
        // Without an error, so the part emits none: what take threw is the answer.
        part.destroy();
      }
    };
    part.on('data', onData);
    finished(part, (err) => {
      if (thrown) reject(thrown.e);
      else if (err) reject(err);
      else resolve();
    });
  });
}
