/**
 * The installed state on disk: an install is an immutable directory in `store/` with an
 * `installed.json` record, reached through a link (`bundles/<id>`, `runtimes/<id>`). Switching is
 * one rename of a fresh link over the old one, so a reader sees the old install or the new one,
 * never a mix; the old directory is removed after the switch.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, readlink, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
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

export function readInstalled(dataDir: string, kind: InstalledRecord['kind'], id: string): Promise<InstalledRecord | undefined> {
  return readRecord(linkOf(dataDir, kind, id));
}

/** The record of the install in `dir` (a link or the store directory it points at). */
export async function readRecord(dir: string): Promise<InstalledRecord | undefined> {
  try {
    return JSON.parse(await readFile(path.join(dir, RECORD), 'utf8')) as InstalledRecord;
  } catch {
    return undefined;
  }
}

/**
 * A fresh staging directory for one install (or an import's, export's unpacking); `store` is where an
 * install moves when complete. Its name carries this process's id, so a later install can tell the
 * leftovers of a killed process (sweepStaging) from the work of one still running.
 */
export async function newStaging(dataDir: string, name: string): Promise<string> {
  const dir = path.join(stagingDir(dataDir), `${name}${ownerMark()}${randomBytes(6).toString('hex')}`);
  await mkdir(dir, { recursive: true });
  return dir;
}

/** `.pid<N>.`: the process that owns a staging entry or a partial download. */
export const ownerMark = (pid = process.pid) => `.pid${pid}.`;

/** The owner of a name made with ownerMark, or undefined for a name without one. */
export function ownerOf(name: string): number | undefined {
  const m = /\.pid(\d+)\./.exec(name);
  return m ? Number(m[1]) : undefined;
}

/** True while process `pid` runs on this machine (EPERM: it runs under another user). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Unmarked leftovers of an older kiln are removed once they are this old. */
const UNMARKED_STALE_MS = 24 * 3600_000;

/**
 * Removes staging left by an install that was killed (SIGKILL, a crash, a power cut): the entries
 * whose owning process is gone. Only the daemon's start-up emptied staging, so a CLI install that
 * was killed left its half-assembled bundle (hundreds of MB for some) there for good. Entries of a
 * process still running (another install of this data dir, the daemon beside the CLI) are kept.
 */
export function sweepStaging(dataDir: string): Promise<void> {
  return sweepAbandoned(stagingDir(dataDir), () => true);
}

/** Removes the entries of `dir` (those `which` names) whose owner process is gone. */
export async function sweepAbandoned(dir: string, which: (name: string) => boolean): Promise<void> {
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (!which(name)) continue;
    const entry = path.join(dir, name);
    const pid = ownerOf(name);
    const stale =
      pid !== undefined
        ? !isAlive(pid)
        : Date.now() - ((await stat(entry).catch(() => undefined))?.mtimeMs ?? Date.now()) > UNMARKED_STALE_MS;
    if (stale) await rm(entry, { recursive: true, force: true });
  }
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
