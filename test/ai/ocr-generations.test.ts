/**
 * OCR runtime generations: a release signed with a test key installs, is smoke-tested and switched
 * in; every kind of bad release (tampered index, bad signature, untrusted key, size and digest
 * mismatches, a `..` path, a symlink, a failing smoke test, an interrupted install, too little
 * memory) is refused with the previous generation still active and nothing left behind; a request
 * holding a lease keeps its generation across a switch, which is collected once released.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { gunzipSync, gzipSync } from 'node:zlib';
import { acquireLease, activeGeneration, generations, installGeneration } from '../../src/ai/ocr/generations.js';
import { generationsDir } from '../../src/ai/ocr/paths.js';
import { indexFor, pack } from '../../src/ai/ocr/release.js';
import {
  INDEX_FILE,
  INDEX_FORMAT,
  type IndexFile,
  readIndexFile,
  type ReleaseIndex,
  SHIPPED_INDEX_FILE,
  signIndex,
  trustedKeys,
} from '../../src/ai/ocr/release-index.js';
import { readTar, tarChunks } from '../../src/ai/ocr/tar.js';
import { PPOCR_FILES, type PpocrOutput } from '../../src/ai/models/ppocr-v4.js';
import { renderLine } from '../../src/ai/ocr/smoke.js';
import { DET_OPTIONS } from '../../src/ai/tasks/ocr-tiers.js';
import { runModel } from '../../src/ai/run-model.js';
import { platformKey } from '../../src/ai/runtimes/manifest.js';
import { KilnError } from '../../src/core/errors.js';
import { tempDir } from '../helpers/fixtures.js';
import { type TestRelease, testKey, testRelease } from '../helpers/ocr.js';

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const key = testKey();
const keys = [key.publicKey];

describe('OCR runtime generations', { timeout: 300_000 }, () => {
  const dir = tempDir('kiln-ocr-gen-');
  const dataDir = path.join(dir, 'data');
  let rel: TestRelease;
  let first: string;
  let n = 0;

  /** Writes an index (and archive) into a fresh directory and tries to install them. */
  async function tryInstall(index: ReleaseIndex | string, archive: Buffer | string, o: Parameters<typeof installGeneration>[1] = {}) {
    const d = path.join(dir, `try-${++n}`);
    const { mkdir } = await import('node:fs/promises');
    await mkdir(d, { recursive: true });
    await writeFile(path.join(d, INDEX_FILE), typeof index === 'string' ? index : JSON.stringify(index));
    const a = typeof archive === 'string' ? archive : path.join(d, 'archive.tar.gz');
    if (typeof archive !== 'string') await writeFile(a, archive);
    return installGeneration(dataDir, { indexFile: path.join(d, INDEX_FILE), archiveFile: a, keys, ...o });
  }

  async function refused(p: Promise<unknown>, reason: string) {
    await assert.rejects(p, (e: unknown) => {
      assert.ok(e instanceof KilnError, String(e));
      assert.equal(e.reason, reason, e.message);
      return true;
    });
    assert.equal((await activeGeneration(dataDir))?.id, first, 'the previous generation stays active');
    const left = (await readdir(generationsDir(dataDir))).filter((d) => d !== first);
    assert.deepEqual(left, [], 'nothing of the refused candidate is left');
  }

  /** An archive of arbitrary entries with a correctly signed index (paths, types and modes as given). */
  function custom(entries: { path: string; type?: string; mode: number; data: Buffer; linkTarget?: string }[], files?: IndexFile[]) {
    const tar = Buffer.concat([...tarChunks(entries)]);
    const archive = gzipSync(tar);
    const index: ReleaseIndex = {
      format: INDEX_FORMAT,
      release: 'evil',
      platform: platformKey(),
      createdAt: new Date().toISOString(),
      archive: {
        file: 'evil.tar.gz',
        bytes: archive.length,
        sha256: sha256(archive),
        extractedBytes: tar.length,
        extractedSha256: sha256(tar),
      },
      files: files ?? entries.map((e) => ({ path: e.path, size: e.data.length, sha256: sha256(e.data), mode: e.mode })),
      models: [],
      runtime: { id: 'onnxruntime', version: '1.30.0' },
      smokeText: 'X',
    };
    return { index: signIndex(index, key.privateKeyPem), archive };
  }

  before(async () => {
    rel = await testRelease();
    const r = await installGeneration(dataDir, { indexFile: rel.indexFile, archiveFile: rel.archiveFile, keys });
    first = r.generation.id;
  });

  it('installs a signed release: verified, smoke-tested, active; the same release again is a no-op', async () => {
    const g = await activeGeneration(dataDir);
    assert.equal(g?.id, first);
    assert.equal(g?.smoke.toUpperCase(), rel.index.smokeText);
    assert.equal(g?.models.length, 4);
    const again = await installGeneration(dataDir, { indexFile: rel.indexFile, archiveFile: rel.archiveFile, keys });
    assert.equal(again.result, 'already');
  });

  it('assembles byte for byte what the shipped, signed index binds', async () => {
    const shipped = await readIndexFile(SHIPPED_INDEX_FILE, trustedKeys({}));
    if (shipped.platform === platformKey()) assert.equal(rel.index.archive.sha256, shipped.archive.sha256);
    assert.ok(shipped.assemble?.packages.length);
  });

  it('refuses a tampered index, a bad signature and an untrusted key', async () => {
    const tampered = JSON.parse(await readFile(rel.indexFile, 'utf8')) as ReleaseIndex;
    tampered.files[0]!.mode = 0o755;
    await refused(tryInstall(tampered, rel.archiveFile), 'bad-signature');
    const bad = JSON.parse(await readFile(rel.indexFile, 'utf8')) as ReleaseIndex;
    bad.signature!.value = Buffer.alloc(64, 1).toString('base64');
    await refused(tryInstall(bad, rel.archiveFile), 'bad-signature');
    const { signature: _s, ...unsigned } = rel.index;
    await refused(tryInstall(signIndex(unsigned as ReleaseIndex, testKey(9).privateKeyPem), rel.archiveFile), 'untrusted-key');
    await refused(tryInstall(JSON.stringify(unsigned), rel.archiveFile), 'signature-missing');
  });

  it('refuses an archive whose size or digest differs from the index', async () => {
    const good = await readFile(rel.archiveFile);
    await refused(tryInstall(rel.index, Buffer.concat([good, Buffer.from([0])])), 'size-mismatch');
    const flipped = Buffer.from(good);
    flipped[flipped.length - 100] ^= 0xff;
    await refused(tryInstall(rel.index, flipped), 'digest-mismatch');
  });

  it('refuses `..` paths, links and wrong modes even in a validly signed release', async () => {
    const data = Buffer.from('x');
    const dotdot = custom([{ path: 'ai/../../escaped', mode: 0o644, data }]);
    await refused(tryInstall(dotdot.index, dotdot.archive), 'unsafe-path');
    // The index lists a harmless name; the archive's entry climbs out.
    const sneaky = custom(
      [{ path: '../escaped', mode: 0o644, data }],
      [{ path: 'ai/escaped', size: 1, sha256: sha256(data), mode: 0o644 }],
    );
    await refused(tryInstall(sneaky.index, sneaky.archive), 'unsafe-path');
    assert.ok(!existsSync(path.join(dataDir, 'ai', 'v3', 'escaped')) && !existsSync(path.join(dataDir, 'ai', 'escaped')));
    const link = custom(
      [{ path: 'ai/bundles/ocr/keys', type: '2', mode: 0o644, data: Buffer.alloc(0), linkTarget: '/etc/passwd' }],
      [{ path: 'ai/bundles/ocr/keys', size: 0, sha256: sha256(Buffer.alloc(0)), mode: 0o644 }],
    );
    await refused(tryInstall(link.index, link.archive), 'link');
    const mode = custom([{ path: 'ai/x', mode: 0o755, data }], [{ path: 'ai/x', size: 1, sha256: sha256(data), mode: 0o644 }]);
    await refused(tryInstall(mode.index, mode.archive), 'mode-mismatch');
    const setuid = custom([{ path: 'ai/x', mode: 0o4755, data }]);
    await refused(tryInstall(setuid.index, setuid.archive), 'bad-mode');
  });

  it('refuses a release whose staged runtime fails the smoke test', async () => {
    // The real runtime and models, but a dictionary in the wrong order: recognition reads garbage.
    const files = [...readTar(gunzipSync(await readFile(rel.archiveFile)))].map((e) => ({
      path: e.path,
      mode: e.mode & 0o777,
      data: Buffer.from(e.data),
    }));
    const dict = files.find((f) => f.path.endsWith(PPOCR_FILES.dict))!;
    dict.data = Buffer.from(dict.data.toString('utf8').split('\n').reverse().join('\n'));
    const a = pack(files);
    const index = indexFor(a, { release: 'broken', platform: platformKey(), privateKeyPem: key.privateKeyPem });
    await refused(tryInstall(index, a.archive), 'smoke-test-failed');
  });

  it('refuses an install interrupted midway, and one below 4 GiB of memory', async () => {
    const { signature: _s, ...unsigned } = rel.index;
    const other = signIndex({ ...(unsigned as ReleaseIndex), release: '0.0.9-test' }, key.privateKeyPem);
    const ac = new AbortController();
    await refused(
      tryInstall(other, rel.archiveFile, { signal: ac.signal, onProgress: (stage, f) => stage === 'extracting' && f > 0.3 && ac.abort() }),
      'cancelled',
    );
    await assert.rejects(tryInstall(other, rel.archiveFile, { memoryBytes: 3 * 1024 ** 3 }), (e: KilnError) => {
      assert.equal(e.code, 'FEATURE_INCOMPATIBLE');
      assert.equal(e.reason, 'insufficient-memory');
      return true;
    });
    assert.equal((await activeGeneration(dataDir))?.id, first);
  });

  it('keeps a leased generation across a switch for the request in flight, then collects it', async () => {
    const lease = await acquireLease(dataDir);
    assert.equal(lease?.generation.id, first);
    // A request on the old generation runs while the new one is installed and switched in.
    const img = await renderLine('Leases keep generations', { width: 900, height: 120 });
    const inFlight = runModel<PpocrOutput>(
      'ppocr-v4',
      { ...img, det: DET_OPTIONS.balanced, recognise: true, angle: false },
      { dataDir: lease!.dir },
    );
    const { signature: _s, ...unsigned } = rel.index;
    const second = signIndex({ ...(unsigned as ReleaseIndex), release: '0.0.2-test' }, key.privateKeyPem);
    const r = await tryInstall(second, rel.archiveFile);
    assert.notEqual(r.generation.id, first);
    assert.equal((await activeGeneration(dataDir))?.id, r.generation.id);
    const { output } = await inFlight;
    assert.equal(output.lines.map((l) => l.text).join(' '), 'Leases keep generations');
    assert.ok(existsSync(lease!.dir), 'the leased generation is still on disk');
    assert.deepEqual(
      (await generations(dataDir)).map((g) => [g.id, g.active, g.leases]).sort(),
      [
        [first, false, 1],
        [r.generation.id, true, 0],
      ].sort(),
    );
    // A new request gets the new generation.
    const next = await acquireLease(dataDir);
    assert.equal(next?.generation.id, r.generation.id);
    await next!.release();
    await lease!.release();
    assert.ok(!existsSync(lease!.dir), 'drained, then collected');
    first = r.generation.id;
  });
});
