/**
 * Imports model files into a data dir as an admin would: a bundle archive made the way `kiln features
 * export` makes it (kiln-bundle.json, files/, runtimes/ with the pinned runtime tarballs from the shared
 * cache), through importBundle.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { findBundle } from '../../src/ai/bundles/list.js';
import { ARCHIVE_INDEX, importBundle } from '../../src/ai/install/archive.js';
import { downloadsOf } from '../../src/ai/install/installer.js';
import { exec } from '../../src/core/process.js';
import { cachedTarball } from './install-helper.js';

/**
 * Packs `files` (name → bytes) and, unless `withRuntimes` is false (the data dir has them already), the
 * bundle's runtimes into an archive under `workDir` and imports it into `dataDir`.
 */
export async function importArchive(
  dataDir: string,
  workDir: string,
  bundleId: string,
  files: Record<string, Buffer>,
  withRuntimes = true,
): Promise<void> {
  const b = findBundle(bundleId)!;
  const pack = mkdtempSync(path.join(workDir, 'pack-'));
  mkdirSync(path.join(pack, 'files'));
  mkdirSync(path.join(pack, 'runtimes'));
  const index = {
    format: 'kiln-bundle/1',
    bundle: b.id,
    version: b.version,
    files: Object.entries(files).map(([name, data]) => ({
      name,
      size: data.length,
      sha256: createHash('sha256').update(data).digest('hex'),
    })),
    runtimes: [] as unknown[],
  };
  for (const [name, data] of Object.entries(files)) writeFileSync(path.join(pack, 'files', name), data);
  for (const r of withRuntimes ? downloadsOf(b).runtimes : []) {
    const packages = [];
    for (const p of r.packages) {
      const file = `${p.name.replace('/', '+')}-${p.version}.tgz`;
      symlinkSync(await cachedTarball(p), path.join(pack, 'runtimes', file));
      packages.push({ name: p.name, version: p.version, integrity: p.integrity, file });
    }
    index.runtimes.push({ id: r.id, version: r.version, packages });
  }
  writeFileSync(path.join(pack, ARCHIVE_INDEX), JSON.stringify(index, null, 2));
  const archive = path.join(pack, `${bundleId}.tar`);
  await exec('tar', ['-chf', archive, '-C', pack, ARCHIVE_INDEX, 'files', 'runtimes']);
  assert.deepEqual(await importBundle(dataDir, archive), { bundle: b.id, version: b.version });
}
