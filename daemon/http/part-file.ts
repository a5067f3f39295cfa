/**
 * One uploaded file part written to its file, the way every multipart upload does it (tool runs:
 * uploads.ts, the file library: library/upload.ts): chunk by chunk, one write at a time (the loop waits
 * for each: back-pressure). stream.pipeline through a counting Transform into a write stream cost a
 * 64×64 request ~0.5-0.7 ms of the daemon's CPU (rotate 8.0-8.1 → 7.3-7.6 ms a request, three
 * interleaved pairs; the main thread's share ~0.25 ms); on Node 20 pipeline also ends every call by
 * aborting its own AbortController, whose DOMException captures a stack.
 */
import { open } from 'node:fs/promises';
import type { Readable } from 'node:stream';

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
