/**
 * OCR runtime generations (spec "OCR runtime generation"): an install takes a signed index and its
 * archive (downloaded from the release location, assembled from npm tarballs, or uploaded by an
 * admin), verifies the signature, the archive's size and digest, the extracted size and digest and
 * every file's path, type, mode, size and digest, writes the files into a new generation directory,
 * runs the smoke test there, and only then switches the `active` link to it (one rename). Any
 * failure removes the candidate and leaves the previous generation active.
 *
 * Requests lease the active generation for as long as they run (a file per lease, named by pid, so
 * leases of a process that died do not count); a generation that is no longer active is removed by
 * garbage collection once its last lease is released.
 */
import { type KeyObject, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, readlink, rename, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { KilnError, toKilnError } from '../../core/errors.js';
import { platformKey } from '../runtimes/manifest.js';
import { effectiveMemory, OCR_MIN_MEMORY } from './memory.js';
import { activeLink, GENERATION_RECORD, generationDir, generationsDir, lastInstallFile, leasesDir, v3Dir } from './paths.js';
import { INDEX_FILE, readIndexFile, type ReleaseIndex, trustedKeys } from './release-index.js';
import { smokeTest } from './smoke.js';
import { checkArchive, extractVerified, refuse } from './archive-verify.js';
import { fetchRelease } from './release-fetch.js';

export interface GenerationRecord {
  id: string;
  release: string;
  platform: string;
  archiveSha256: string;
  extractedBytes: number;
  runtime: ReleaseIndex['runtime'];
  models: ReleaseIndex['models'];
  keyId: string;
  installedAt: string;
  via: 'download' | 'npm-assembled' | 'import';
  smoke: string;
}

export type InstallProgress = (
  stage: 'verifying' | 'downloading' | 'assembling' | 'extracting' | 'smoke-test' | 'switching',
  fraction: number,
) => void;

export interface InstallOptions {
  /** Import: the admin's index and archive files. Without them the release location is used. */
  indexFile?: string;
  archiveFile?: string;
  signal?: AbortSignal;
  onProgress?: InstallProgress;
  /** Trusted public keys (default: the shipped key and KILN_OCR_TRUSTED_KEYS). */
  keys?: KeyObject[];
  /** Effective memory override (tests). */
  memoryBytes?: number;
  env?: NodeJS.ProcessEnv;
}

export async function activeGeneration(dataDir: string): Promise<GenerationRecord | undefined> {
  try {
    return JSON.parse(await readFile(path.join(activeLink(dataDir), GENERATION_RECORD), 'utf8')) as GenerationRecord;
  } catch {
    return undefined;
  }
}

const pidAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

async function liveLeases(dataDir: string, id: string): Promise<number> {
  const names = await readdir(leasesDir(dataDir, id)).catch(() => [] as string[]);
  let n = 0;
  for (const f of names) {
    if (pidAlive(Number(f.split('-')[0]))) n++;
    else await rm(path.join(leasesDir(dataDir, id), f), { force: true });
  }
  return n;
}

export interface Lease {
  generation: GenerationRecord;
  /** The generation's directory: what the model host loads it by (as its data dir). */
  dir: string;
  release(): Promise<void>;
}

/** Leases the active generation for one request; undefined when none is installed. */
export async function acquireLease(dataDir: string): Promise<Lease | undefined> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const target = await readlink(activeLink(dataDir)).catch(() => undefined);
    if (!target) return undefined;
    const id = path.basename(target);
    const dir = generationDir(dataDir, id);
    const file = path.join(leasesDir(dataDir, id), `${process.pid}-${randomBytes(6).toString('hex')}`);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, '');
    // A switch and a collection may have run between reading the link and writing the lease.
    let generation: GenerationRecord | undefined;
    try {
      generation = JSON.parse(await readFile(path.join(dir, GENERATION_RECORD), 'utf8')) as GenerationRecord;
    } catch {
      await rm(file, { force: true });
      continue;
    }
    let released = false;
    return {
      generation,
      dir,
      async release() {
        if (released) return;
        released = true;
        await rm(file, { force: true });
        await collectGarbage(dataDir).catch(() => {});
      },
    };
  }
  return undefined;
}

/** Removes generations that are neither active nor leased, and candidates an interrupted install left. */
export async function collectGarbage(dataDir: string): Promise<string[]> {
  const active = path.basename((await readlink(activeLink(dataDir)).catch(() => '')) || '');
  const removed: string[] = [];
  for (const name of await readdir(generationsDir(dataDir)).catch(() => [] as string[])) {
    if (name === active || name.startsWith('.')) continue;
    const dir = generationDir(dataDir, name);
    const complete = existsSync(path.join(dir, GENERATION_RECORD));
    if (!complete) {
      const owner = Number((await readFile(path.join(dir, '.installing'), 'utf8').catch(() => '0')).trim());
      if (owner && pidAlive(owner)) continue;
    } else if (await liveLeases(dataDir, name)) continue;
    // Out of sight first, then a last look for a lease taken meanwhile.
    const trash = path.join(generationsDir(dataDir), `.trash-${name}-${randomBytes(4).toString('hex')}`);
    await rename(dir, trash);
    if (complete && (await liveLeases(dataDir, name))) {
      await rename(trash, dir);
      continue;
    }
    await rm(trash, { recursive: true, force: true });
    await rm(leasesDir(dataDir, name), { recursive: true, force: true });
    removed.push(name);
  }
  for (const name of await readdir(generationsDir(dataDir)).catch(() => [] as string[])) {
    if (name.startsWith('.trash-')) await rm(path.join(generationsDir(dataDir), name), { recursive: true, force: true });
  }
  return removed;
}

export async function generations(dataDir: string): Promise<{ id: string; active: boolean; leases: number }[]> {
  const active = path.basename((await readlink(activeLink(dataDir)).catch(() => '')) || '');
  const out: { id: string; active: boolean; leases: number }[] = [];
  for (const name of await readdir(generationsDir(dataDir)).catch(() => [] as string[])) {
    if (name.startsWith('.') || !existsSync(path.join(generationDir(dataDir, name), GENERATION_RECORD))) continue;
    out.push({ id: name, active: name === active, leases: await liveLeases(dataDir, name) });
  }
  return out;
}

export function checkMemory(bytes?: number): void {
  const m = bytes !== undefined ? { bytes, source: 'override' } : effectiveMemory();
  if (m.bytes < OCR_MIN_MEMORY)
    throw new KilnError(
      'FEATURE_INCOMPATIBLE',
      `The exact OCR runtime needs at least 4 GiB of memory; this system has ${(m.bytes / 1024 ** 3).toFixed(1)} GiB (${m.source}). Quality 'fast' still works.`,
      { reason: 'insufficient-memory', details: { effectiveMemoryBytes: m.bytes, requiredBytes: OCR_MIN_MEMORY } },
    );
}

let chain: Promise<unknown> = Promise.resolve();
/** Installs of one process never overlap (the daemon also runs them in its install queue's lock). */
function serial<T>(fn: () => Promise<T>): Promise<T> {
  const run = chain.then(fn, fn);
  chain = run.catch(() => {});
  return run;
}

async function recordOutcome(dataDir: string, outcome: Record<string, unknown>): Promise<void> {
  await mkdir(v3Dir(dataDir), { recursive: true });
  const tmp = `${lastInstallFile(dataDir)}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(outcome, null, 2)}\n`);
  await rename(tmp, lastInstallFile(dataDir));
}

export async function lastInstall(
  dataDir: string,
): Promise<
  | { state: 'installed' | 'failed' | 'installing'; error?: { message: string; reason?: string }; at: string; generation?: string }
  | undefined
> {
  try {
    return JSON.parse(await readFile(lastInstallFile(dataDir), 'utf8'));
  } catch {
    return undefined;
  }
}

/** Installs (or imports) a generation and switches to it; 'already' when that exact release is active. */
export function installGeneration(
  dataDir: string,
  o: InstallOptions = {},
): Promise<{ result: 'installed' | 'already'; generation: GenerationRecord }> {
  return serial(async () => {
    await recordOutcome(dataDir, { state: 'installing', at: new Date().toISOString() });
    try {
      const r = await install(dataDir, o);
      await recordOutcome(dataDir, { state: 'installed', at: new Date().toISOString(), generation: r.generation.id });
      return r;
    } catch (e) {
      const k = o.signal?.aborted
        ? new KilnError('CANCELLED', 'The OCR runtime install was interrupted; the previous generation stays active.', {
            reason: 'cancelled',
          })
        : toKilnError(e);
      const err =
        k.code === 'INTERNAL' || k.code === 'UNSUPPORTED_INPUT'
          ? new KilnError(k.code, `OCR runtime install refused: ${k.message} The previous generation stays active.`, {
              reason: k.reason,
              details: k.details,
            })
          : k;
      await recordOutcome(dataDir, { state: 'failed', at: new Date().toISOString(), error: { message: err.message, reason: err.reason } });
      throw err;
    }
  });
}

async function install(dataDir: string, o: InstallOptions): Promise<{ result: 'installed' | 'already'; generation: GenerationRecord }> {
  checkMemory(o.memoryBytes);
  const keys = o.keys ?? trustedKeys(o.env);
  o.onProgress?.('verifying', 0);
  await mkdir(generationsDir(dataDir), { recursive: true });
  await collectGarbage(dataDir);
  let index: ReleaseIndex;
  let archive: Buffer;
  let via: GenerationRecord['via'];
  if (o.indexFile || o.archiveFile) {
    if (!o.indexFile || !o.archiveFile)
      throw new KilnError('VALIDATION_ERROR', `An OCR runtime import needs both the index (${INDEX_FILE}) and the archive.`);
    index = await readIndexFile(o.indexFile, keys);
    archive = await readFile(o.archiveFile);
    via = 'import';
  } else ({ index, archive, via } = await fetchRelease(dataDir, keys, o));
  o.signal?.throwIfAborted();
  checkArchive(index, archive);
  if (index.platform !== platformKey())
    throw new KilnError(
      'FEATURE_INCOMPATIBLE',
      `This OCR runtime release is built for ${index.platform}; this system is ${platformKey()}.`,
      { reason: 'platform-mismatch' },
    );
  const id = `${index.release}-${index.archive.sha256.slice(0, 12)}`.replace(/[^\w.-]/g, '_');
  const dir = generationDir(dataDir, id);
  const current = await activeGeneration(dataDir);
  if (current?.id === id) return { result: 'already', generation: current };
  if (existsSync(path.join(dir, GENERATION_RECORD))) {
    // Installed earlier and still kept (leased): verified then, switch back to it.
    const record = JSON.parse(await readFile(path.join(dir, GENERATION_RECORD), 'utf8')) as GenerationRecord;
    await switchTo(dataDir, id);
    return { result: 'installed', generation: record };
  }
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, '.installing'), String(process.pid));
  try {
    await extractVerified(index, archive, dir, o);
    o.signal?.throwIfAborted();
    o.onProgress?.('smoke-test', 0);
    let smoke: string;
    try {
      smoke = await smokeTest(dir, index.smokeText, o.signal);
    } catch (e) {
      if (o.signal?.aborted) throw e;
      throw refuse(`The staged OCR runtime failed its smoke test: ${(e as Error).message}.`, 'smoke-test-failed');
    }
    const record: GenerationRecord = {
      id,
      release: index.release,
      platform: index.platform,
      archiveSha256: index.archive.sha256,
      extractedBytes: index.archive.extractedBytes,
      runtime: index.runtime,
      models: index.models,
      keyId: index.signature!.keyId,
      installedAt: new Date().toISOString(),
      via,
      smoke,
    };
    await writeFile(path.join(dir, INDEX_FILE), `${JSON.stringify(index, null, 2)}\n`, { mode: 0o644 });
    await writeFile(path.join(dir, GENERATION_RECORD), `${JSON.stringify(record, null, 2)}\n`, { mode: 0o644 });
    await rm(path.join(dir, '.installing'), { force: true });
    o.onProgress?.('switching', 1);
    await switchTo(dataDir, id);
    return { result: 'installed', generation: record };
  } catch (e) {
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
}

/** Points `active` at generation `id` (a fresh link renamed over the old one), then collects the old one when unleased. */
async function switchTo(dataDir: string, id: string): Promise<void> {
  const link = activeLink(dataDir);
  const tmp = `${link}.${randomBytes(4).toString('hex')}.tmp`;
  await symlink(path.join('generations', id), tmp);
  await rename(tmp, link);
  await collectGarbage(dataDir);
}

/** Removes the OCR runtime: the link first, then every unleased generation. */
export async function removeGenerations(dataDir: string): Promise<boolean> {
  const had = await readlink(activeLink(dataDir)).catch(() => undefined);
  await rm(activeLink(dataDir), { force: true });
  await collectGarbage(dataDir);
  return !!had;
}
