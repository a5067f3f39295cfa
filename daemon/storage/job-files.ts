/**
 * Job inputs and outputs in object storage (S3 mode). The instance that takes a request uploads the
 * inputs under `jobs/<id>/in/`, the worker that runs the job (any instance) fetches them into its own
 * scratch directory and uploads the output under `jobs/<id>/out/`; the job record's output_path then
 * names the object (`object:<key>`) instead of a file, so any instance serves the download. With local
 * storage (the default) nothing moves: inputs and outputs stay files under the shared directory.
 */
import { createReadStream } from 'node:fs';
import { copyFile, mkdir, open, stat } from 'node:fs/promises';
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

export async function outputInfo(storage: ObjectStorage, outputPath: string): Promise<OutputInfo | undefined> {
  const key = storedKey(outputPath);
  if (key) return storage.head(key);
  const st = await stat(outputPath).catch(() => undefined);
  return st && { size: st.size, modifiedAt: st.mtimeMs };
}

/**
 * The output, open for reading. A file on disk is opened here, not on the stream's first read (as a
 * stored object is fetched before this returns): one the TTL sweep removed since it was looked at is
 * NOT_FOUND before anything is answered. Lazily opened, it was a 500 carrying the server's path in its
 * message and the file's Content-Disposition. Once open, the sweep removing it does not cut the download.
 */
export async function openOutput(storage: ObjectStorage, outputPath: string, range?: ByteRange): Promise<Readable> {
  const key = storedKey(outputPath);
  if (key) return storage.get(key, range);
  const handle = await open(outputPath, 'r').catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') throw new KilnError('NOT_FOUND', 'The output has expired or was removed.');
    throw e;
  });
  return handle.createReadStream(range ? { start: range.start, end: range.end } : {});
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
