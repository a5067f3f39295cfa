/**
 * Job inputs and outputs in object storage (S3 mode). The instance that takes a request uploads the
 * inputs under `jobs/<id>/in/`, the worker that runs the job (any instance) fetches them into its own
 * scratch directory and uploads the output under `jobs/<id>/out/`; the job record's output_path then
 * names the object (`object:<key>`) instead of a file, so any instance serves the download. With local
 * storage (the default) nothing moves: inputs and outputs stay files under the shared directory.
 */
import { createReadStream } from 'node:fs';
import { copyFile, mkdir, open } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { KilnError } from '../../src/core/errors.js';
import { safeFileName } from '../../src/core/paths.js';
import type { InputFile, ToolInputs } from '../../src/core/tool.js';
import type { ByteRange, ObjectStorage } from './storage.js';
import { deletePrefix } from './storage.js';

const OBJECT = 'object:';

export function jobPrefix(jobId: string): string {
  return `jobs/${jobId}/`;
}

/** The object key an output_path names, or undefined for a file on disk. */
export function storedKey(outputPath: string): string | undefined {
  return outputPath.startsWith(OBJECT) ? outputPath.slice(OBJECT.length) : undefined;
}

/** Whether job files go through object storage (S3) rather than the shared directory. */
export function storesJobFiles(storage: ObjectStorage): boolean {
  return storage.kind !== 'local';
}

/** Uploads every input; the returned inputs name object keys in `path`. */
export async function storeInputs(storage: ObjectStorage, jobId: string, inputs: ToolInputs): Promise<ToolInputs> {
  let n = 0;
  const put = async (f: InputFile): Promise<InputFile> => {
    const key = `${jobPrefix(jobId)}in/${n++}-${safeFileName(f.name, 'input')}`;
    await storage.putFile(key, f.path);
    return { ...f, path: key };
  };
  const files = [];
  for (const f of inputs.files) files.push(await put(f));
  const extra: ToolInputs['extra'] = {};
  for (const [k, list] of Object.entries(inputs.extra)) {
    extra[k] = [];
    for (const f of list) extra[k].push(await put(f));
  }
  return { files, extra };
}

/** Fetches stored inputs into `dir`; the returned inputs name the local files. */
export async function fetchInputs(storage: ObjectStorage, inputs: ToolInputs, dir: string): Promise<ToolInputs> {
  await mkdir(dir, { recursive: true });
  const get = async (f: InputFile): Promise<InputFile> => {
    const dest = path.join(dir, path.basename(f.path));
    await storage.download(f.path, dest);
    return { ...f, path: dest };
  };
  const files = [];
  for (const f of inputs.files) files.push(await get(f));
  const extra: ToolInputs['extra'] = {};
  for (const [k, list] of Object.entries(inputs.extra)) {
    extra[k] = [];
    for (const f of list) extra[k].push(await get(f));
  }
  return { files, extra };
}

/** Uploads a finished job's output; the value for its output_path. */
export async function storeOutput(
  storage: ObjectStorage,
  jobId: string,
  file: string,
  name: string,
  contentType?: string,
): Promise<string> {
  const key = `${jobPrefix(jobId)}out/${safeFileName(name, 'output')}`;
  await storage.putStream(key, createReadStream(file), { contentType });
  return OBJECT + key;
}

export interface OutputInfo {
  size: number;
  modifiedAt: number;
}

/** A file on disk read whole into memory up to this size: one read, where a stream takes two and a close before its end. */
const READ_WHOLE_BYTES = 64 * 1024;

/** An output, open: its size and time, then its bytes (or a range of them) once, or nothing (close). */
export interface OpenOutput extends OutputInfo {
  /** The bytes from `range` (all without), as a stream or, for a small file on disk, a buffer. Once. */
  read(range?: ByteRange): Promise<Readable | Buffer>;
  /** Lets go of the output unless read() took it (a 304, a 416, a failure); more calls do nothing. */
  close(): void;
}

/**
 * The output, open for reading, or undefined when it is gone. A file on disk is opened before it is
 * looked at, so its size and time come from the open file: one the TTL sweep removes afterwards still
 * downloads whole, and one removed before is NOT_FOUND before anything is answered (opened lazily, it
 * was a 500 carrying the server's path, under the file's Content-Disposition). Opened first, a small
 * output also costs three calls on the thread pool before its answer (open, fstat, read), where a stat,
 * an open and a stream took five.
 */
export async function openOutput(storage: ObjectStorage, outputPath: string): Promise<OpenOutput | undefined> {
  const key = storedKey(outputPath);
  if (key) {
    const info = await storage.head(key);
    return info && { ...info, read: (range) => storage.get(key, range), close() {} };
  }
  const handle = await open(outputPath, 'r').catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return undefined;
    throw e;
  });
  if (!handle) return undefined;
  const st = await handle.stat().catch(async (e: unknown) => {
    await handle.close();
    throw e;
  });
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    void handle.close().catch(() => {});
  };
  return {
    size: st.size,
    modifiedAt: st.mtimeMs,
    close,
    async read(range) {
      if (range || st.size > READ_WHOLE_BYTES) return handle.createReadStream(range ? { start: range.start, end: range.end } : {});
      try {
        const buf = Buffer.allocUnsafe(st.size);
        const { bytesRead } = await handle.read(buf, 0, st.size, 0);
        return buf.subarray(0, bytesRead);
      } finally {
        // The answer need not wait for the close.
        close();
      }
    },
  };
}

/** An output's whole content as a stream (an archive to pass on): NOT_FOUND when it is gone. */
export async function readOutput(storage: ObjectStorage, outputPath: string): Promise<Readable> {
  const key = storedKey(outputPath);
  if (key) return storage.get(key);
  const handle = await open(outputPath, 'r').catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') throw new KilnError('NOT_FOUND', 'The output has expired or was removed.');
    throw e;
  });
  return handle.createReadStream();
}

/** Copies an output (stored or on disk) to a local file. */
export async function copyOutput(storage: ObjectStorage, outputPath: string, file: string): Promise<void> {
  const key = storedKey(outputPath);
  if (key) await storage.download(key, file);
  else await copyFile(outputPath, file);
}

/** Removes a job's stored inputs once its run has ended (the output stays until the TTL sweep). */
export async function removeStoredInputs(storage: ObjectStorage, jobId: string): Promise<number> {
  return storesJobFiles(storage) ? deletePrefix(storage, `${jobPrefix(jobId)}in/`) : 0;
}

/** Removes whatever a job stored (its inputs and output); nothing with local storage. */
export async function removeJobObjects(storage: ObjectStorage, jobId: string): Promise<number> {
  return storesJobFiles(storage) ? deletePrefix(storage, jobPrefix(jobId)) : 0;
}
