/**
 * The installed state on disk: an install is an immutable directory in `store/` with an
 * `installed.json` record, reached through a link (`bundles/<id>`, `runtimes/<id>`). Switching is
 * one rename of a fresh link over the old one, so a reader sees the old install or the new one,
 * never a mix; the old directory is removed after the switch.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, readlink, rename, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { bundleLink, runtimeLink, stagingDir, storeDir } from '../paths.js';

export interface InstalledFile {
  name: string;
  size: number;
  sha256: string;
}

export interface InstalledRecord {
  kind: 'bundle' | 'runtime';
  id: string;
  version: string;
  /** Bytes on disk. */
  bytes: number;
  installedAt: string;
  /** 'download' from the pinned sources, 'import' from an admin's archive. */
  via: 'download' | 'import';
  files?: InstalledFile[];
}

const RECORD = 'installed.json';

export function linkOf(dataDir: string, kind: InstalledRecord['kind'], id: string): string {
  return kind === 'bundle' ? bundleLink(dataDir, id) : runtimeLink(dataDir, id);
}

export async function readInstalled(dataDir: string, kind: InstalledRecord['kind'], id: string): Promise<InstalledRecord | undefined> {
  try {
    return JSON.parse(await readFile(path.join(linkOf(dataDir, kind, id), RECORD), 'utf8')) as InstalledRecord;
  } catch {
    return undefined;
  }
}

/** A fresh staging directory for one install; `store` is where it moves when complete. */
export async function newStaging(dataDir: string, name: string): Promise<string> {
  const dir = path.join(stagingDir(dataDir), `${name}-${randomBytes(6).toString('hex')}`);
  await mkdir(dir, { recursive: true });
  return dir;
}

/** Writes the record, moves the staged directory into the store and switches the link to it. */
export async function commitInstall(dataDir: string, staged: string, record: InstalledRecord): Promise<void> {
  await writeFile(path.join(staged, RECORD), `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  const store = storeDir(dataDir);
  await mkdir(store, { recursive: true });
  const target = path.join(store, path.basename(staged));
  await rename(staged, target);
  const link = linkOf(dataDir, record.kind, record.id);
  await mkdir(path.dirname(link), { recursive: true });
  const previous = await readlink(link).catch(() => undefined);
  const tmp = `${link}.${randomBytes(4).toString('hex')}.tmp`;
  await symlink(path.relative(path.dirname(link), target), tmp);
  await rename(tmp, link);
  if (previous) await rm(path.resolve(path.dirname(link), previous), { recursive: true, force: true });
}

/** commitInstall for a bundle: its record from the files that were staged and verified. */
export function commitBundle(
  dataDir: string,
  staged: string,
  bundle: { id: string; version: string },
  files: InstalledFile[],
  via: InstalledRecord['via'],
): Promise<void> {
  return commitInstall(dataDir, staged, {
    kind: 'bundle',
    id: bundle.id,
    version: bundle.version,
    bytes: files.reduce((n, f) => n + f.size, 0),
    installedAt: new Date().toISOString(),
    via,
    files,
  });
}

/** Removes an install: the link first (readers stop seeing it), then its directory. */
export async function removeInstall(dataDir: string, kind: InstalledRecord['kind'], id: string): Promise<boolean> {
  const link = linkOf(dataDir, kind, id);
  const target = await readlink(link).catch(() => undefined);
  if (!target) return false;
  await rm(link, { force: true });
  await rm(path.resolve(path.dirname(link), target), { recursive: true, force: true });
  return true;
}

/** At start-up: staging left by an interrupted install is never used, only removed. */
export async function clearStaging(dataDir: string): Promise<void> {
  await rm(stagingDir(dataDir), { recursive: true, force: true });
}
