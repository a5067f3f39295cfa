/**
 * The bundle installer against a local registry and file server: a good install, a second install
 * that downloads nothing, and every way a download goes wrong (wrong digest, wrong size, truncated,
 * server gone mid-way, a broken reinstall) — each ends failed with nothing half-installed and an
 * installed earlier version untouched. Archives: export/import round trip, tampered and linked ones refused.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, readlink, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BundleManifest } from '../../src/ai/bundles/manifest.js';
import { installBundle } from '../../src/ai/install/installer.js';
import { bundleLink, stagingDir } from '../../src/ai/paths.js';
import { exec } from '../../src/core/process.js';
import { KilnError } from '../../src/core/errors.js';
import { tempDir } from '../helpers/fixtures.js';

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const sha512 = (b: Buffer) => `sha512-${createHash('sha512').update(b).digest('base64')}`;

/** What the server answers per path: bytes, or a misbehaviour. */
type Answer =
  | { body: Buffer }
  | { truncateAt: number; body: Buffer }
  | { hangUpAt: number; body: Buffer }
  | { stallAt: number; body: Buffer };

describe('bundle installer', () => {
  let server: Server;
  let base: string;
  const answers = new Map<string, Answer>();
  const hits = new Map<string, number>();
  let dir: string;
  let tgz: Buffer;
  const chunkA = Buffer.from('first half of a model;'.repeat(2000));
  const chunkB = Buffer.from('second half of a model.'.repeat(1500));
  const weights = Buffer.from('weights of a second file'.repeat(500));

  before(async () => {
    dir = tempDir('kiln-install-');
    // An npm-style tarball whose two members make one model file.
    const pkg = path.join(dir, 'pkg', 'package');
    await mkdir(path.join(pkg, 'dist'), { recursive: true });
    await writeFile(path.join(pkg, 'package.json'), '{"name":"test-models","version":"1.0.0"}');
    await writeFile(path.join(pkg, 'dist', 'b0'), chunkA);
    await writeFile(path.join(pkg, 'dist', 'a1'), chunkB);
    await exec('tar', ['-czf', path.join(dir, 'models.tgz'), '-C', path.join(dir, 'pkg'), 'package']);
    tgz = await readFile(path.join(dir, 'models.tgz'));
    server = createServer((req, res) => {
      hits.set(req.url!, (hits.get(req.url!) ?? 0) + 1);
      const a = answers.get(req.url!);
      if (!a) return res.writeHead(404).end();
      res.writeHead(200, { 'content-length': a.body.length });
      if ('truncateAt' in a) return res.end(a.body.subarray(0, a.truncateAt), () => res.destroy());
      if ('stallAt' in a) return res.write(a.body.subarray(0, a.stallAt));
      if ('hangUpAt' in a) return res.write(a.body.subarray(0, a.hangUpAt), () => setTimeout(() => req.socket.destroy(), 50));
      res.end(a.body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    process.env.KILN_NPM_REGISTRY = `${base}/npm/`;
    answers.set('/npm/test-models/-/test-models-1.0.0.tgz', { body: tgz });
    answers.set('/files/weights.bin', { body: weights });
  });
  after(async () => {
    delete process.env.KILN_NPM_REGISTRY;
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await rm(dir, { recursive: true, force: true });
  });

  function manifest(version: string, over: Partial<{ weightsSha: string; weightsSize: number }> = {}): BundleManifest {
    const model = Buffer.concat([chunkA, chunkB]);
    return {
      id: 'background-removal',
      version,
      title: 'test bundle',
      licence: 'MIT',
      runtimes: [],
      tools: [],
      files: [
        {
          name: 'model.onnx',
          size: model.length,
          sha256: sha256(model),
          source: {
            kind: 'npm',
            tarball: { name: 'test-models', version: '1.0.0', integrity: sha512(tgz), size: tgz.length },
            // Archive order is a1, b0; the file is b0 then a1.
            members: ['package/dist/b0', 'package/dist/a1'],
          },
        },
        {
          name: 'weights.bin',
          size: over.weightsSize ?? weights.length,
          sha256: over.weightsSha ?? sha256(weights),
          source: { kind: 'url', url: `${base}/files/weights.bin` },
        },
      ],
    };
  }

  /** Nothing half-installed: no staging left, and the link (if any) points at a complete install. */
  async function assertClean(dataDir: string) {
    const staging = stagingDir(dataDir);
    assert.deepEqual(existsSync(staging) ? await readdir(staging) : [], []);
  }

  async function failure(p: Promise<unknown>): Promise<KilnError> {
    try {
      await p;
    } catch (e) {
      assert.ok(e instanceof KilnError, String(e));
      return e;
    }
    assert.fail('expected the install to fail');
  }

  it('installs from an npm tarball (members joined in order) and a URL, verified; a second install downloads nothing', async () => {
    const dataDir = tempDir('kiln-install-data-');
    process.env.KILN_AI_CACHE_DIR = path.join(dataDir, 'cache');
    let last = 0;
    assert.equal(await installBundle(dataDir, manifest('1'), { onProgress: (d) => (last = d) }), 'installed');
    assert.equal(last, tgz.length + weights.length);
    const link = bundleLink(dataDir, 'background-removal');
    assert.deepEqual(await readFile(path.join(link, 'model.onnx')), Buffer.concat([chunkA, chunkB]));
    assert.deepEqual(await readFile(path.join(link, 'weights.bin')), weights);
    const rec = JSON.parse(await readFile(path.join(link, 'installed.json'), 'utf8'));
    assert.equal(rec.version, '1');
    assert.equal(rec.via, 'download');
    const before = hits.get('/files/weights.bin');
    assert.equal(await installBundle(dataDir, manifest('1')), 'already');
    assert.equal(hits.get('/files/weights.bin'), before);
    // A model file cut short on disk (a full disk mid-copy) is no install: it is installed again.
    await truncate(path.join(link, 'weights.bin'), 10);
    assert.equal(await installBundle(dataDir, manifest('1')), 'installed');
    assert.deepEqual(await readFile(path.join(bundleLink(dataDir, 'background-removal'), 'weights.bin')), weights);
    await assertClean(dataDir);
  });

  it('a wrong digest, a wrong size, a truncated body and a server gone mid-way each fail clean, keeping the installed version', async () => {
    const dataDir = tempDir('kiln-install-data-');
    process.env.KILN_AI_CACHE_DIR = path.join(dataDir, 'cache');
    await installBundle(dataDir, manifest('1'));
    const link = bundleLink(dataDir, 'background-removal');
    const installedTarget = await readlink(link);

    const digest = await failure(installBundle(dataDir, manifest('2', { weightsSha: 'ab'.repeat(32) })));
    assert.equal(digest.reason, 'digest-mismatch');
    assert.match(digest.message, /weights\.bin|SHA-256|sha256/i);

    const size = await failure(installBundle(dataDir, manifest('2', { weightsSize: weights.length + 5 })));
    assert.equal(size.reason, 'size-mismatch');

    // The verified download is cached by digest; without the cache the next tries go to the network.
    await rm(path.join(dataDir, 'cache'), { recursive: true, force: true });
    answers.set('/files/weights.bin', { truncateAt: 1000, body: weights });
    const truncated = await failure(installBundle(dataDir, manifest('2')));
    assert.ok(['interrupted', 'size-mismatch'].includes(truncated.reason!), truncated.reason);

    answers.set('/files/weights.bin', { hangUpAt: 3000, body: weights });
    const gone = await failure(installBundle(dataDir, manifest('2')));
    assert.ok(['interrupted', 'size-mismatch'].includes(gone.reason!), gone.reason);

    answers.delete('/files/weights.bin');
    const missing = await failure(installBundle(dataDir, manifest('2')));
    assert.equal(missing.reason, 'http-status');

    answers.set('/files/weights.bin', { body: weights });
    // Version 1 is still the installed one, complete, and nothing unverified is in the cache.
    assert.equal(await readlink(link), installedTarget);
    assert.equal(JSON.parse(await readFile(path.join(link, 'installed.json'), 'utf8')).version, '1');
    assert.deepEqual(await readFile(path.join(link, 'weights.bin')), weights);
    const cached = await readdir(path.join(dataDir, 'cache'));
    assert.ok(
      cached.every((f) => !f.endsWith('.part')),
      cached.join(', '),
    );
    await assertClean(dataDir);
    // And a good version 2 then switches over and removes version 1's directory.
    assert.equal(await installBundle(dataDir, manifest('2')), 'installed');
    assert.notEqual(await readlink(link), installedTarget);
    assert.equal(existsSync(path.resolve(path.dirname(link), installedTarget)), false);
  });

  it('an install killed mid-download (SIGKILL) leaves staging and a partial download that the next install removes', async () => {
    const dataDir = tempDir('kiln-install-data-');
    const cache = path.join(dataDir, 'cache');
    process.env.KILN_AI_CACHE_DIR = cache;
    answers.set('/files/weights.bin', { stallAt: 3000, body: weights });
    // Another process installs (as `kiln features install` does) and is killed while the download stalls.
    const installer = path.resolve(import.meta.dirname, '../../src/ai/install/installer.js');
    const child = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { installBundle } from ${JSON.stringify(installer)}; await installBundle(process.env.D, JSON.parse(process.env.M));`,
      ],
      { env: { ...process.env, D: dataDir, M: JSON.stringify(manifest('1')) }, stdio: 'ignore' },
    );
    try {
      for (let i = 0; !(await readdir(cache).catch(() => [] as string[])).some((f) => f.endsWith('.part')); i++) {
        assert.ok(i < 600, 'the child never started its download');
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.ok((await readdir(stagingDir(dataDir))).length > 0, 'the child staged something');
    } finally {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
    answers.set('/files/weights.bin', { body: weights });
    assert.equal(await installBundle(dataDir, manifest('1')), 'installed');
    await assertClean(dataDir);
    const cached = await readdir(cache);
    assert.ok(
      cached.every((f) => !f.endsWith('.part')),
      cached.join(', '),
    );
  });

  it('an npm tarball that does not match its integrity string is refused before anything is extracted', async () => {
    const dataDir = tempDir('kiln-install-data-');
    process.env.KILN_AI_CACHE_DIR = path.join(dataDir, 'cache');
    const m = manifest('1');
    const src = m.files[0]!.source as Extract<BundleManifest['files'][0]['source'], { kind: 'npm' }>;
    src.tarball = { ...src.tarball, integrity: sha512(Buffer.from('other bytes')) };
    const e = await failure(installBundle(dataDir, m));
    assert.equal(e.reason, 'digest-mismatch');
    assert.equal(existsSync(bundleLink(dataDir, 'background-removal')), false);
    await assertClean(dataDir);
  });
});

describe('bundle archives', () => {
  it('refuses an archive holding a link or a path leaving it, before extracting', async () => {
    const { importBundle } = await import('../../src/ai/install/archive.js');
    const dir = tempDir('kiln-archive-');
    const dataDir = tempDir('kiln-archive-data-');
    await mkdir(path.join(dir, 'a', 'files'), { recursive: true });
    await writeFile(path.join(dir, 'a', 'kiln-bundle.json'), '{"format":"kiln-bundle/1","bundle":"background-removal","version":"x"}');
    await symlink('/etc/passwd', path.join(dir, 'a', 'files', 'isnet-fp16.onnx'));
    await exec('tar', ['-cf', path.join(dir, 'link.tar'), '-C', path.join(dir, 'a'), '.']);
    await assert.rejects(importBundle(dataDir, path.join(dir, 'link.tar')), (e: KilnError) => e.reason === 'archive-link');
    await exec('tar', ['-cf', path.join(dir, 'dots.tar'), '-P', '-C', path.join(dir, 'a'), 'kiln-bundle.json', '--transform', 's,^,../,']);
    await assert.rejects(importBundle(dataDir, path.join(dir, 'dots.tar')), (e: KilnError) => e.reason === 'archive-path');
    await assert.rejects(importBundle(dataDir, path.join(dir, 'link.tar').replace('link', 'none')), KilnError);
    // Not a tar at all (a model file given by itself): said so, with what an archive holds, not tar's output.
    await writeFile(path.join(dir, 'model.onnx'), 'not a tar archive, a model file given by itself');
    await assert.rejects(importBundle(dataDir, path.join(dir, 'model.onnx')), (e: KilnError) => {
      assert.equal(e.code, 'UNSUPPORTED_INPUT');
      assert.equal(e.reason, 'not-an-archive');
      assert.match(e.message, /model\.onnx is not a bundle archive.*kiln-bundle\.json/);
      return true;
    });
    assert.equal(existsSync(bundleLink(dataDir, 'background-removal')), false);
  });
});
