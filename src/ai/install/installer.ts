/**
 * Installs a bundle (and the runtimes it needs) from its pinned sources: download into the cache,
 * verify, assemble every file in a staging directory, verify every file's size and SHA-256 again,
 * then switch atomically (layout.ts). Any failure removes the staging directory and leaves an
 * installed bundle of an earlier version untouched.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { KilnError } from '../../core/errors.js';
import type { BundleFile, BundleManifest } from '../bundles/manifest.js';
import { cacheDir, stagingDir } from '../paths.js';
import { findRuntime } from '../runtimes/list.js';
import { type NpmPin, platformKey, type RuntimeManifest } from '../runtimes/manifest.js';
import { cachedDownload, type Digest, hashFile } from './download.js';
import { commitBundle, commitInstall, type InstalledFile, linkOf, newStaging, readInstalled, readRecord, sweepStaging } from './layout.js';
import { extractTarball, fetchTarball } from './npm.js';

export type InstallProgress = (bytesDone: number, bytesTotal: number, stage: string) => void;

export interface InstallOptions {
  signal?: AbortSignal;
  onProgress?: InstallProgress;
}

/** Downloads a bundle install may need, for progress: each tarball counted once. */
export function downloadsOf(bundle: BundleManifest): { runtimes: RuntimeManifest[]; bytes: number } {
  const runtimes = bundle.runtimes.map((id) => findRuntime(id)!).filter(Boolean);
  const seen = new Set<string>();
  let bytes = 0;
  for (const r of runtimes) for (const p of r.packages) if (!seen.has(p.integrity) && seen.add(p.integrity)) bytes += p.size;
  for (const f of bundle.files) {
    if (f.source.kind === 'npm') {
      if (!seen.has(f.source.tarball.integrity) && seen.add(f.source.tarball.integrity)) bytes += f.source.tarball.size;
    } else if (f.source.kind === 'url') bytes += f.size ?? 0;
  }
  return { runtimes, bytes };
}

export async function isRuntimeInstalled(dataDir: string, r: RuntimeManifest): Promise<boolean> {
  return (await readInstalled(dataDir, 'runtime', r.id))?.version === r.version;
}

export async function isBundleCurrent(dataDir: string, b: BundleManifest): Promise<boolean> {
  return (await readInstalled(dataDir, 'bundle', b.id))?.version === b.version;
}

/** A file of an install not on disk as the install recorded it: gone (`found` null), of another size, or (checked on request) other bytes. */
export interface DamagedFile {
  name: string;
  size: number;
  found: number | null;
  digestMismatch?: true;
}

/**
 * The files recorded by the install in `dir` (a bundle link or the store directory it points at; only
 * `names` when given) that are no longer there at their recorded size, or with `digests` whose
 * SHA-256 is not the recorded one. A model file truncated or removed by hand (a disk full mid-copy, a
 * cleaner) made every run fail while `install` answered "already installed"; sizes are cheap to check,
 * digests (hundreds of MB) only when a model fails to load (src/ai/host/worker.ts).
 */
export async function damagedFiles(dir: string, o: { names?: readonly string[]; digests?: boolean } = {}): Promise<DamagedFile[]> {
  const rec = await readRecord(dir);
  const out: DamagedFile[] = [];
  for (const f of rec?.files ?? []) {
    if (o.names && !o.names.includes(f.name)) continue;
    const file = path.join(dir, f.name);
    const found = (await stat(file).catch(() => undefined))?.size ?? null;
    if (found !== f.size) out.push({ name: f.name, size: f.size, found });
    else if (o.digests && (await hashFile(file, 'sha256', 'hex').catch(() => '')) !== f.sha256)
      out.push({ name: f.name, size: f.size, found, digestMismatch: true });
  }
  return out;
}

/** Installed at this kiln's version with every recorded file in place: what an install leaves alone. */
export async function isBundleIntact(dataDir: string, b: BundleManifest): Promise<boolean> {
  return (await isBundleCurrent(dataDir, b)) && !(await damagedFiles(linkOf(dataDir, 'bundle', b.id))).length;
}

/** True for a file only an imported archive can supply (no verifiable download). */
export const importOnly = (f: BundleFile) => f.source.kind === 'import';

/**
 * The `import` files of `b` that its current install lacks (all of them when it is not installed).
 * A bundle mixing downloadable and import-only files installs without the latter; the tools that
 * need one (its `usedBy`) ask for the import.
 */
export async function missingImports(dataDir: string, b: BundleManifest): Promise<BundleFile[]> {
  const rec = await readInstalled(dataDir, 'bundle', b.id);
  const have = new Set(rec?.version === b.version ? (rec.files ?? []).map((f) => f.name) : []);
  return b.files.filter((f) => importOnly(f) && !have.has(f.name));
}

/** Byte counter shared by every download of one install. */
function meter(total: number, opts: InstallOptions) {
  let done = 0;
  let stage = 'downloading';
  const report = () => opts.onProgress?.(Math.min(done, total), total, stage);
  return {
    /** A callback for one download, which reports its own running total. */
    counter(): (n: number) => void {
      let seen = 0;
      return (n: number) => {
        done += n - seen;
        seen = n;
        report();
      };
    },
    stage(s: string) {
      stage = s;
      report();
    },
  };
}

async function dirBytes(dir: string): Promise<number> {
  let n = 0;
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) n += (await stat(path.join(e.parentPath, e.name))).size;
  }
  return n;
}

/** Installs a runtime from its pinned tarballs; `tarballOf` gives a verified local copy of each. */
export async function installRuntime(
  dataDir: string,
  r: RuntimeManifest,
  tarballOf: (p: NpmPin) => Promise<string>,
  opts: { signal?: AbortSignal } = {},
): Promise<void> {
  const staged = await newStaging(dataDir, `runtime-${r.id}-${r.version}`);
  try {
    for (const p of r.packages) {
      const tgz = await tarballOf(p);
      await extractTarball(tgz, path.join(staged, 'node_modules', p.name), p.include?.(platformKey()), opts.signal);
    }
    await commitInstall(dataDir, staged, {
      kind: 'runtime',
      id: r.id,
      version: r.version,
      bytes: await dirBytes(staged),
      installedAt: new Date().toISOString(),
      via: 'download',
    });
  } catch (e) {
    await rm(staged, { recursive: true, force: true });
    throw e;
  }
}

/**
 * Concatenates `parts` into `dest`, returning the SHA-256 and size of the result (and its SHA-1 when
 * asked: files pinned by a published SHA-1 are verified on the bytes written, not only in the cache).
 */
async function assemble(parts: string[], dest: string, withSha1 = false): Promise<{ sha256: string; size: number; sha1?: string }> {
  const h = createHash('sha256');
  const h1 = withSha1 ? createHash('sha1') : undefined;
  const out = await open(dest, 'w', 0o644);
  let size = 0;
  try {
    for (const p of parts) {
      for await (const chunk of createReadStream(p) as AsyncIterable<Buffer>) {
        h.update(chunk);
        h1?.update(chunk);
        size += chunk.length;
        await out.write(chunk);
      }
    }
  } finally {
    await out.close();
  }
  return { sha256: h.digest('hex'), size, ...(h1 && { sha1: h1.digest('hex') }) };
}

/** The digest a file's download is checked against: its SHA-256, or the published SHA-1 when that is all upstream gives. */
export function pinnedDigest(f: BundleFile): Digest | undefined {
  if (f.sha256) return { algorithm: 'sha256', value: f.sha256, encoding: 'hex' };
  if (f.sha1) return { algorithm: 'sha1', value: f.sha1, encoding: 'hex' };
  return undefined;
}

/** True when `got` matches every digest pinned for `f` (a null SHA-256 is recorded, not compared). */
export function matchesPin(f: BundleFile, got: { sha256: string; size: number; sha1?: string }): boolean {
  return got.size === f.size && (f.sha256 === null || got.sha256 === f.sha256) && (!f.sha1 || got.sha1 === f.sha1);
}

function mismatch(bundle: string, f: BundleFile, got: { sha256: string; size: number; sha1?: string }): KilnError {
  const why =
    got.size !== f.size
      ? `${got.size} bytes, ${f.size} pinned`
      : f.sha256
        ? `SHA-256 ${got.sha256}, ${f.sha256} pinned`
        : `SHA-1 ${got.sha1}, ${f.sha1} pinned`;
  return new KilnError('UNAVAILABLE', `${bundle}: ${f.name} does not match its pin (${why}).`, {
    reason: got.size !== f.size ? 'size-mismatch' : 'digest-mismatch',
  });
}

async function fetchFile(
  dataDir: string,
  bundle: BundleManifest,
  f: BundleFile,
  dest: string,
  m: ReturnType<typeof meter>,
  opts: InstallOptions,
) {
  const src = f.source;
  if (src.kind === 'import') {
    // Unreachable from installBundle (it skips import files); kept as the answer for anything else.
    throw new KilnError(
      'FEATURE_NOT_INSTALLED',
      `${bundle.id}: ${f.name} has no verifiable download; import the bundle archive (kiln features import FILE).`,
      { reason: 'import-only' },
    );
  }
  if (src.kind === 'url') {
    const digest = pinnedDigest(f);
    if (!digest) throw new KilnError('INTERNAL', `${bundle.id}: ${f.name} has a URL source but no pinned digest.`);
    const file = await cachedDownload({
      url: src.url,
      what: `${bundle.id}/${f.name}`,
      digest,
      size: f.size ?? undefined,
      cache: cacheDir(dataDir),
      signal: opts.signal,
      onBytes: m.counter(),
    });
    return assemble([file], dest, !!f.sha1);
  }
  const tgz = await fetchTarball(src.tarball as NpmPin, cacheDir(dataDir), { signal: opts.signal, onBytes: m.counter() });
  const tmp = await newStaging(dataDir, 'members');
  try {
    await extractTarball(tgz, tmp, src.members, opts.signal);
    return await assemble(
      src.members.map((x) => path.join(tmp, x.replace(/^package\//, ''))),
      dest,
      !!f.sha1,
    );
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

/**
 * Installs `bundle` and any runtime it lacks. Already-current parts are skipped, so a second call
 * downloads nothing.
 */
export async function installBundle(dataDir: string, bundle: BundleManifest, opts: InstallOptions = {}): Promise<'installed' | 'already'> {
  const { runtimes, bytes } = downloadsOf(bundle);
  const m = meter(bytes, opts);
  const missingRuntimes: RuntimeManifest[] = [];
  for (const r of runtimes) if (!(await isRuntimeInstalled(dataDir, r))) missingRuntimes.push(r);
  const current = await isBundleIntact(dataDir, bundle);
  if (current && !missingRuntimes.length) return 'already';
  await mkdir(stagingDir(dataDir), { recursive: true });
  await sweepStaging(dataDir);
  for (const r of missingRuntimes) {
    await installRuntime(dataDir, r, (p) => fetchTarball(p, cacheDir(dataDir), { signal: opts.signal, onBytes: m.counter() }), opts);
  }
  if (current) return 'installed';
  const downloadable = bundle.files.filter((f) => !importOnly(f));
  if (!downloadable.length) {
    throw new KilnError(
      'FEATURE_NOT_INSTALLED',
      `${bundle.id} has no verifiable download; import its archive (kiln features import FILE).`,
      {
        reason: 'import-only',
      },
    );
  }
  const previous = await readInstalled(dataDir, 'bundle', bundle.id);
  const staged = await newStaging(dataDir, `bundle-${bundle.id}-${bundle.version}`);
  try {
    const files: InstalledFile[] = [];
    // Import-only files are never downloaded: one an earlier install got by import is kept (its
    // recorded digest checked again), the others stay missing until an archive supplies them.
    for (const f of bundle.files.filter(importOnly)) {
      const had = previous?.files?.find((x) => x.name === f.name);
      if (!had) continue;
      const from = path.join(linkOf(dataDir, 'bundle', bundle.id), f.name);
      const got = await assemble([from], path.join(staged, f.name)).catch(() => undefined);
      if (got && got.sha256 === had.sha256 && (f.size === null || got.size === f.size)) files.push(had);
      else await rm(path.join(staged, f.name), { force: true });
    }
    for (const f of downloadable) {
      const got = await fetchFile(dataDir, bundle, f, path.join(staged, f.name), m, opts);
      if (!matchesPin(f, got)) throw mismatch(bundle.id, f, got);
      files.push({ name: f.name, size: got.size, sha256: got.sha256 });
    }
    m.stage('switching');
    await commitBundle(dataDir, staged, bundle, files, 'download');
    return 'installed';
  } catch (e) {
    await rm(staged, { recursive: true, force: true });
    throw e;
  }
}
