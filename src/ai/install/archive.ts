/**
 * Air-gapped installs. `exportBundle` writes one tar archive holding a bundle's files, its runtimes'
 * npm tarballs and a `kiln-bundle.json` that lists them; `importBundle` installs such an archive on a
 * machine without network, verifying everything against the same pins as a download: each runtime
 * tarball against its integrity string, each bundle file against its size and SHA-256 (or the
 * published SHA-1 where that is all upstream gives, the SHA-256 then recorded; a file with
 * no published digest — an `import` source — is recorded with the digest the import computed).
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { copyFile, mkdir, readFile, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { KilnError } from '../../core/errors.js';
import { exec } from '../../core/process.js';
import { findBundle } from '../bundles/list.js';
import type { BundleManifest } from '../bundles/manifest.js';
import { cacheDir } from '../paths.js';
import { verifiedFile, integrityDigest } from './download.js';
import { downloadsOf, importOnly, installBundle, type InstallOptions, installRuntime, isRuntimeInstalled } from './installer.js';
import { commitBundle, type InstalledFile, linkOf, newStaging, readInstalled, sweepStaging } from './layout.js';
import { fetchTarball, tarballCachePath } from './npm.js';

export const ARCHIVE_INDEX = 'kiln-bundle.json';

interface ArchiveIndex {
  format: 'kiln-bundle/1';
  bundle: string;
  version: string;
  files: { name: string; size: number; sha256: string }[];
  runtimes: { id: string; version: string; packages: { name: string; version: string; integrity: string; file: string }[] }[];
}

const tarName = (name: string, version: string) => `${name.replace('/', '+')}-${version}.tgz`;

function bad(message: string, reason: string): KilnError {
  return new KilnError('UNSUPPORTED_INPUT', message, { reason });
}

/** Installs the bundle here when needed (downloads), then packs it with its runtimes into `outFile`. */
export async function exportBundle(
  dataDir: string,
  bundle: BundleManifest,
  outFile: string,
  opts: InstallOptions = {},
): Promise<{ bytes: number }> {
  await installBundle(dataDir, bundle, opts);
  const dir = await newStaging(dataDir, 'export');
  const part = `${outFile}.${process.pid}.part`;
  try {
    const installed = linkOf(dataDir, 'bundle', bundle.id);
    await mkdir(path.join(dir, 'files'));
    await mkdir(path.join(dir, 'runtimes'));
    const index: ArchiveIndex = { format: 'kiln-bundle/1', bundle: bundle.id, version: bundle.version, files: [], runtimes: [] };
    const rec = JSON.parse(await readFile(path.join(installed, 'installed.json'), 'utf8')) as { files: InstalledFile[] };
    // Links, packed with -h: the archive gets the bytes without a second copy on disk here. Only
    // the installed files: an import-only file this machine never got is not in the archive either.
    for (const f of rec.files) await symlink(path.join(installed, f.name), path.join(dir, 'files', f.name));
    index.files = rec.files.map((f) => ({ name: f.name, size: f.size, sha256: f.sha256 }));
    for (const r of downloadsOf(bundle).runtimes) {
      const packages = [];
      for (const p of r.packages) {
        const tgz = await fetchTarball(p, cacheDir(dataDir), { signal: opts.signal });
        const file = tarName(p.name, p.version);
        await symlink(tgz, path.join(dir, 'runtimes', file));
        packages.push({ name: p.name, version: p.version, integrity: p.integrity, file });
      }
      index.runtimes.push({ id: r.id, version: r.version, packages });
    }
    await writeFile(path.join(dir, ARCHIVE_INDEX), `${JSON.stringify(index, null, 2)}\n`);
    await exec('tar', ['-chf', part, '-C', dir, ARCHIVE_INDEX, 'files', 'runtimes'], { signal: opts.signal, timeoutMs: 3_600_000 });
    await rename(part, outFile);
    return { bytes: (await stat(outFile)).size };
  } finally {
    await rm(dir, { recursive: true, force: true });
    await rm(part, { force: true });
  }
}

/** Copies a verified file into the download cache under its cache name (atomically). */
async function keepInCache(file: string, cached: string): Promise<void> {
  await mkdir(path.dirname(cached), { recursive: true });
  const part = `${cached}.${process.pid}.${Date.now()}.part`;
  try {
    await copyFile(file, part);
    await rename(part, cached);
  } finally {
    await rm(part, { force: true });
  }
}

/** Refuses links, devices and names leaving the archive before anything is extracted. */
async function checkMembers(archive: string): Promise<void> {
  // A file that is no tar at all (a model file given by itself, a truncated download) is said so, not as tar's raw output.
  const { stdout } = await exec('tar', ['-tvf', archive], { failCode: 'UNSUPPORTED_INPUT', maxStdout: 16 * 1024 * 1024 }).catch(() => {
    throw bad(
      `${path.basename(archive)} is not a bundle archive: a tar holding ${ARCHIVE_INDEX} and files/ (kiln features export makes one; docs/AI.md says how to make one by hand).`,
      'not-an-archive',
    );
  });
  for (const line of stdout.split('\n').filter(Boolean)) {
    const type = line[0];
    const name = line.split(/\s+/).slice(5).join(' ');
    if (type !== '-' && type !== 'd')
      throw bad(`The archive holds a link or special file (${name}); bundle archives hold plain files only.`, 'archive-link');
    if (name.startsWith('/') || name.split('/').includes('..')) throw bad(`The archive holds a path leaving it (${name}).`, 'archive-path');
  }
}

async function digestOf(file: string, algorithm: 'sha1' | 'sha256'): Promise<string> {
  const h = createHash(algorithm);
  await pipeline(createReadStream(file), h);
  return h.digest('hex');
}

/** Verifies and installs a bundle archive made by exportBundle (or by hand for `import` sources). */
export async function importBundle(
  dataDir: string,
  archive: string,
  opts: { signal?: AbortSignal } = {},
): Promise<{ bundle: string; version: string }> {
  await checkMembers(archive);
  await sweepStaging(dataDir);
  const dir = await newStaging(dataDir, 'import');
  let staged: string | undefined;
  try {
    await exec('tar', ['-xf', archive, '-C', dir, '--no-same-owner', '--no-same-permissions'], {
      signal: opts.signal,
      failCode: 'UNSUPPORTED_INPUT',
    });
    let index: ArchiveIndex;
    try {
      index = JSON.parse(await readFile(path.join(dir, ARCHIVE_INDEX), 'utf8')) as ArchiveIndex;
    } catch {
      throw bad(`Not a kiln bundle archive: ${ARCHIVE_INDEX} is missing or not JSON.`, 'archive-index');
    }
    const bundle = findBundle(index.bundle);
    if (!bundle) throw bad(`The archive holds the bundle "${index.bundle}", which this kiln does not know.`, 'unknown-bundle');
    if (index.version !== bundle.version) {
      throw bad(
        `The archive holds ${bundle.id} ${index.version}; this kiln installs ${bundle.version}. Export it from a kiln of the same version.`,
        'version-mismatch',
      );
    }
    // Runtimes: each tarball must match its pin; verified ones go to the cache and install from there.
    for (const r of downloadsOf(bundle).runtimes) {
      if (await isRuntimeInstalled(dataDir, r)) continue;
      for (const p of r.packages) {
        const file = path.join(dir, 'runtimes', tarName(p.name, p.version));
        if (!(await verifiedFile(file, integrityDigest(p.integrity), p.size))) {
          throw bad(`${p.name}@${p.version} in the archive is missing or does not match its pinned integrity.`, 'digest-mismatch');
        }
      }
      // Verified tarballs go to the cache too: an export from this machine (another instance's copy,
      // daemon/features/archive-store.ts) then needs no download either.
      for (const p of r.packages)
        await keepInCache(path.join(dir, 'runtimes', tarName(p.name, p.version)), tarballCachePath(p, cacheDir(dataDir)));
      await installRuntime(dataDir, r, async (p) => tarballCachePath(p, cacheDir(dataDir)), opts);
    }
    staged = await newStaging(dataDir, `bundle-${bundle.id}-${bundle.version}`);
    const files: InstalledFile[] = [];
    const current = await readInstalled(dataDir, 'bundle', bundle.id);
    for (const f of bundle.files) {
      let src = path.join(dir, 'files', f.name);
      let st = await stat(src).catch(() => undefined);
      if (!st?.isFile()) {
        // Not in the archive: taken from this machine's install of the same version when it has
        // the file (an archive may carry only the import-only files of a bundle installed online);
        // an import-only file may stay missing (its tools say so), any other file may not.
        const had = current?.version === bundle.version && current.files?.some((x) => x.name === f.name);
        if (had) {
          src = path.join(linkOf(dataDir, 'bundle', bundle.id), f.name);
          st = await stat(src).catch(() => undefined);
        }
        if (!st?.isFile()) {
          if (importOnly(f)) continue;
          throw bad(`${f.name} is missing from the archive.`, 'missing-file');
        }
      }
      const digest = await digestOf(src, 'sha256');
      const sha1 = f.sha1 ? await digestOf(src, 'sha1') : undefined;
      const sizeBad = f.size !== null && st.size !== f.size;
      if (sizeBad || (f.sha256 !== null && digest !== f.sha256) || (f.sha1 && sha1 !== f.sha1)) {
        const shown = f.sha1 && !f.sha256 ? `SHA-1 ${sha1}, ${f.sha1} pinned` : `SHA-256 ${digest}`;
        throw new KilnError('UNSUPPORTED_INPUT', `${f.name} in the archive does not match its pin (${st.size} bytes, ${shown}).`, {
          reason: sizeBad ? 'size-mismatch' : 'digest-mismatch',
        });
      }
      if (src.startsWith(dir)) await rename(src, path.join(staged, f.name)).catch(() => copyFile(src, path.join(staged!, f.name)));
      else await copyFile(src, path.join(staged, f.name));
      files.push({ name: f.name, size: st.size, sha256: digest });
    }
    await commitBundle(dataDir, staged, bundle, files, 'import');
    staged = undefined;
    return { bundle: bundle.id, version: bundle.version };
  } finally {
    await rm(dir, { recursive: true, force: true });
    if (staged) await rm(staged, { recursive: true, force: true });
  }
}
