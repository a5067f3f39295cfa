/**
 * Whether a directory the daemon writes to (data dir, shared dir, temp dir) can take new work: it
 * exists, a file can be created in it (a read-only mount or a directory the service user cannot write
 * to fails here, where statfs alone would still report free space) and it has enough free space.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, rm, statfs, writeFile } from 'node:fs/promises';
import path from 'node:path';

export interface DirHealth {
  path: string;
  ok: boolean;
  writable: boolean;
  freeBytes?: number;
  totalBytes?: number;
  error?: string;
}

/**
 * `minFreeBytes`: below this much free space new uploads would likely fail half-way (MIN_FREE_DISK_MB).
 * `create`: the directory is made when missing, as its users do (the workspaces' root).
 */
export async function dirHealth(dir: string, minFreeBytes: number, opts: { create?: boolean } = {}): Promise<DirHealth> {
  let space: { freeBytes: number; totalBytes: number };
  try {
    if (opts.create) await mkdir(dir, { recursive: true });
    const s = await statfs(dir);
    space = { freeBytes: s.bavail * s.bsize, totalBytes: s.blocks * s.bsize };
  } catch (e) {
    return { path: dir, ok: false, writable: false, error: `unavailable: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}` };
  }
  const probe = path.join(dir, `.kiln-ready-${process.pid}-${randomBytes(4).toString('hex')}`);
  let writable = true;
  let error: string | undefined;
  try {
    await writeFile(probe, '', { flag: 'wx' });
  } catch (e) {
    writable = false;
    error = `not writable: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`;
  } finally {
    await rm(probe, { force: true }).catch(() => {});
  }
  const low = space.freeBytes < minFreeBytes;
  if (!error && low) error = 'low disk space';
  return { path: dir, ok: writable && !low, writable, ...space, ...(error ? { error } : {}) };
}
