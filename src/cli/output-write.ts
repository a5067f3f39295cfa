/**
 * Writes one output into place for every CLI command (tools, pipelines, `jobs download`, `files get`):
 * the parent directory is created, the bytes go to a hidden temp name beside the destination and are
 * renamed over it, so an interrupted run never leaves a half-written file. `-` is stdout.
 */
import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { copyFile, mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** `from` is a finished file (moved, or copied across file systems) or a stream (a download). */
export async function writeOutput(from: string | Readable, dest: string, signal?: AbortSignal): Promise<void> {
  if (dest === '-') {
    const src = typeof from === 'string' ? createReadStream(from) : from;
    await pipeline(src, process.stdout, { end: false, ...(signal ? { signal } : {}) } as never);
    return;
  }
  await mkdir(path.dirname(dest), { recursive: true });
  const tmp = path.join(path.dirname(dest), `.${path.basename(dest)}.kiln-partial-${process.pid}-${randomUUID().slice(0, 8)}`);
  try {
    if (typeof from === 'string') {
      try {
        await rename(from, tmp);
      } catch {
        await copyFile(from, tmp);
      }
    } else await pipeline(from, createWriteStream(tmp), ...(signal ? [{ signal }] : []));
    await rename(tmp, dest);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}
