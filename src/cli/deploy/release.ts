/**
 * A release tarball of this checkout: what `npm pack` ships, plus the compiled dist/ (the remote gets
 * no TypeScript toolchain) and package-lock.json (so the remote installs exactly these versions with
 * `npm ci --omit=dev`). No node_modules, no tests.
 */
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readdirSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { KilnError } from '../../core/errors.js';
import { exec } from '../../core/process.js';
import { PACKAGE_ROOT, VERSION } from '../../core/version.js';

export interface Release {
  file: string;
  /** version-hash: names the release directory on the remote. */
  id: string;
  bytes: number;
}

function walk(dir: string, rel: string, out: string[]): void {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    const r = path.posix.join(rel, e.name);
    if (e.isDirectory()) walk(p, r, out);
    else if (!r.endsWith('.map')) out.push(r);
  }
}

async function sha256(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return h.digest('hex');
}

export async function buildRelease(workDir: string, signal?: AbortSignal): Promise<Release> {
  const root = PACKAGE_ROOT;
  for (const need of ['dist/src/cli/main.js', 'dist/daemon/server.js', 'package-lock.json']) {
    if (!existsSync(path.join(root, need)))
      throw new KilnError('USAGE_ERROR', `${need} is missing in ${root}: build first (npm run build).`);
  }
  const pack = await exec('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, timeoutMs: 120_000, signal });
  const listed = (JSON.parse(pack.stdout) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
  const files = new Set(listed.filter((f) => !f.startsWith('test/') && !f.startsWith('bench/')));
  files.add('package-lock.json');
  const dist: string[] = [];
  for (const d of ['src', 'daemon', 'scripts'])
    if (existsSync(path.join(root, 'dist', d))) walk(path.join(root, 'dist', d), `dist/${d}`, dist);
  for (const f of dist) files.add(f);
  const list = path.join(workDir, 'files.txt');
  await writeFile(list, [...files].sort().join('\n') + '\n');
  const file = path.join(workDir, `kiln-${VERSION}.tgz`);
  await exec('tar', ['-czf', file, '-C', root, '--owner=0', '--group=0', '--mtime=@0', '--verbatim-files-from', '-T', list], {
    timeoutMs: 300_000,
    signal,
  });
  const hash = await sha256(file);
  return { file, id: `${VERSION}-${hash.slice(0, 12)}`, bytes: statSync(file).size };
}
