/** An OCR runtime archive checked against its signed index, byte for byte and file by file, before any file is written. */
import { createHash } from 'node:crypto';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { KilnError } from '../../core/errors.js';
import type { InstallOptions } from './generations.js';
import { type ReleaseIndex, safePath } from './release-index.js';
import { readTar } from './tar.js';

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

export function refuse(message: string, reason: string): KilnError {
  return new KilnError('UNSUPPORTED_INPUT', message, { reason });
}

export /** The archive as the index binds it: exact size and SHA-256. */
function checkArchive(index: ReleaseIndex, archive: Buffer): void {
  if (archive.length !== index.archive.bytes)
    throw refuse(`The OCR runtime archive has ${archive.length} bytes; the index binds ${index.archive.bytes}.`, 'size-mismatch');
  if (sha256(archive) !== index.archive.sha256)
    throw refuse('The OCR runtime archive does not have the SHA-256 digest its index binds.', 'digest-mismatch');
}

/** Checks the extracted archive against the index and writes its files into `dir`. */
export async function extractVerified(index: ReleaseIndex, archive: Buffer, dir: string, o: InstallOptions): Promise<void> {
  let tar: Buffer;
  try {
    tar = gunzipSync(archive, { maxOutputLength: index.archive.extractedBytes + 1 });
  } catch (e) {
    throw refuse(
      `The OCR runtime archive does not decompress to the ${index.archive.extractedBytes} bytes its index binds (${(e as Error).message}).`,
      'size-mismatch',
    );
  }
  if (tar.length !== index.archive.extractedBytes)
    throw refuse(
      `The OCR runtime archive decompresses to ${tar.length} bytes; the index binds ${index.archive.extractedBytes}.`,
      'size-mismatch',
    );
  if (sha256(tar) !== index.archive.extractedSha256)
    throw refuse('The extracted OCR runtime does not have the digest its index binds.', 'digest-mismatch');
  const expected = new Map(index.files.map((f) => [f.path, f]));
  const seen = new Set<string>();
  let n = 0;
  for (const e of readTar(tar)) {
    o.signal?.throwIfAborted();
    if (e.type !== '0' && e.type !== '\0')
      throw refuse(
        `The OCR runtime archive holds ${e.type === '2' || e.type === '1' ? 'a link' : `an entry of type ${e.type}`} (${e.path}); only regular files are allowed.`,
        'link',
      );
    if (!safePath(e.path)) throw refuse(`The OCR runtime archive holds an unsafe path: ${JSON.stringify(e.path)}.`, 'unsafe-path');
    const f = expected.get(e.path);
    if (!f || seen.has(e.path))
      throw refuse(`The OCR runtime archive holds ${e.path}, which its index does not list once.`, 'unlisted-file');
    seen.add(e.path);
    if ((e.mode & 0o7777) !== f.mode)
      throw refuse(
        `${e.path} has mode ${(e.mode & 0o7777).toString(8)} in the archive; the index binds ${f.mode.toString(8)}.`,
        'mode-mismatch',
      );
    if (e.size !== f.size) throw refuse(`${e.path} has ${e.size} bytes; the index binds ${f.size}.`, 'size-mismatch');
    if (sha256(e.data) !== f.sha256) throw refuse(`${e.path} does not have the SHA-256 its index binds.`, 'digest-mismatch');
    const dest = path.join(dir, ...e.path.split('/'));
    await mkdir(path.dirname(dest), { recursive: true });
    await writeFile(dest, e.data, { mode: f.mode, flag: 'wx' });
    await chmod(dest, f.mode);
    o.onProgress?.('extracting', ++n / expected.size);
  }
  const missing = index.files.filter((f) => !seen.has(f.path));
  if (missing.length)
    throw refuse(`The OCR runtime archive lacks ${missing.length} file(s) its index lists, e.g. ${missing[0]!.path}.`, 'missing-file');
}
