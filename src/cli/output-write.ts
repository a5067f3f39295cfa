/**
 * Writes one output into place for every CLI command (tools, pipelines, `jobs download`, `files get`):
 * the parent directory is created, the bytes go to a hidden temp name beside the destination and are
 * renamed over it, so an interrupted run never leaves a half-written file. `-` is stdout.
 */
import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { copyFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { KilnError } from '../core/errors.js';
import { makeDir } from '../core/make-dir.js';

/** `from` is a finished file (moved, or copied across file systems) or a stream (a download). */
export async function writeOutput(from: string | Readable, dest: string, signal?: AbortSignal): Promise<void> {
  if (dest === '-') {
    const src = typeof from === 'string' ? createReadStream(from) : from;
    await pipeline(src, process.stdout, { end: false, ...(signal ? { signal } : {}) } as never);
    return;
  }
  const dir = path.dirname(dest);
  const tmp = path.join(dir, `.${path.basename(dest)}.kiln-partial-${process.pid}-${randomUUID().slice(0, 8)}`);
  const place = async () => {
    // A finished file on the same file system is renamed into place at once (a rename is atomic); one on
    // another is copied beside the destination first, as a stream is.
    if (typeof from === 'string') {
      try {
        return await rename(from, dest);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EXDEV') throw e;
      }
      await copyFile(from, tmp);
    } else await pipeline(from, createWriteStream(tmp), ...(signal ? [{ signal }] : []));
    await rename(tmp, dest);
  };
  try {
    const known = madeDirs.has(dir);
    await ensureDir(dir);
    await place().catch(async (e: NodeJS.ErrnoException) => {
      // The directory was there for an earlier output of this run and has gone since: made again.
      if (!(known && e.code === 'ENOENT' && typeof from === 'string')) throw e;
      madeDirs.delete(dir);
      await ensureDir(dir);
      await place();
    });
  } catch (e) {
    await rm(tmp, { force: true });
    throw writeFailure(e, dest);
  }
}

/** Directories this process made or found for its outputs: a batch writes hundreds into one. */
const madeDirs = new Set<string>();
async function ensureDir(dir: string): Promise<void> {
  if (madeDirs.has(dir)) return;
  await makeDir(dir);
  madeDirs.add(dir);
}

/** Why the destination cannot be written, naming it (not the hidden temp name) with a stable code. */
export function writeFailure(e: unknown, dest: string): unknown {
  const code = (e as NodeJS.ErrnoException).code;
  const why = WRITE_ERRORS[code ?? ''];
  if (!why) return e;
  const shown = path.relative(process.cwd(), dest) || dest;
  return new KilnError(code === 'ENOSPC' ? 'UNAVAILABLE' : 'USAGE_ERROR', `Cannot write ${shown}: ${why} (${code}).`, { cause: e });
}

const WRITE_ERRORS: Record<string, string> = {
  EACCES: 'permission denied; choose another -o',
  EPERM: 'not permitted; choose another -o',
  EROFS: 'the file system is read-only; choose another -o',
  ENOENT: 'its directory cannot be created there; choose another -o',
  ENOTDIR: 'a part of its path is a file, not a directory; choose another -o',
  EISDIR: 'a directory of that name is in the way; choose another -o',
  EEXIST: 'a part of its path is a file, not a directory; choose another -o',
  ENOSPC: 'no space left on the device',
};
