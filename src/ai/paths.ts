/**
 * Where AI files live under the data dir. Installed bundles and runtimes are links to immutable
 * directories in `store/`, so switching to a new install is one rename of a link.
 */
import path from 'node:path';

export function aiDir(dataDir: string): string {
  return path.join(dataDir, 'ai');
}

/** The link an installed bundle is reached through. */
export function bundleLink(dataDir: string, bundle: string): string {
  return path.join(aiDir(dataDir), 'bundles', bundle);
}

/** The link an installed runtime is reached through (its `node_modules/` holds the pinned packages). */
export function runtimeLink(dataDir: string, runtime: string): string {
  return path.join(aiDir(dataDir), 'runtimes', runtime);
}

/** Immutable installed directories; a link points at one. */
export function storeDir(dataDir: string): string {
  return path.join(aiDir(dataDir), 'store');
}

/** Half-done installs; emptied at start-up, never read as installed. */
export function stagingDir(dataDir: string): string {
  return path.join(aiDir(dataDir), 'staging');
}

/**
 * Verified downloads by digest, so a reinstall or another data dir (tests) needs no second download.
 * KILN_AI_CACHE_DIR shares one cache between data dirs.
 */
export function cacheDir(dataDir: string, env: NodeJS.ProcessEnv = process.env): string {
  return env.KILN_AI_CACHE_DIR ? path.resolve(env.KILN_AI_CACHE_DIR) : path.join(aiDir(dataDir), 'cache');
}

/** The persistent install queue (survives a restart). */
export function queueFile(dataDir: string): string {
  return path.join(aiDir(dataDir), 'installs.json');
}
