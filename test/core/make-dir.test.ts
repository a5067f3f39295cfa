/**
 * makeDir (src/core/make-dir.ts): `mkdir -p` for folders people name, which answers under /proc where
 * node's recursive mkdir spins without end.
 */
import assert from 'node:assert/strict';
import { existsSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { makeDir } from '../../src/core/make-dir.js';
import { kiln } from '../helpers/cli.js';
import { makePhoto, tempDir } from '../helpers/fixtures.js';

const PROC = existsSync('/proc/self');

describe('makeDir', () => {
  const dir = tempDir('kiln-mkdir-');

  it('makes every missing level, with the mode asked for, and accepts a folder that is there', async () => {
    const deep = path.join(dir, 'a', 'b', 'c');
    await makeDir(deep, 0o700);
    assert.ok(statSync(deep).isDirectory());
    assert.equal(statSync(path.join(dir, 'a')).mode & 0o777, 0o700);
    await makeDir(deep);
    await makeDir(dir);
  });

  it('two at once into one new folder both succeed', async () => {
    const target = path.join(dir, 'race', 'x', 'y');
    await Promise.all([makeDir(target), makeDir(target), makeDir(path.join(target, 'z'))]);
    assert.ok(statSync(path.join(target, 'z')).isDirectory());
  });

  it('a file in the way is ENOTDIR', async () => {
    writeFileSync(path.join(dir, 'file'), 'x');
    await assert.rejects(makeDir(path.join(dir, 'file', 'sub')), { code: 'ENOTDIR' });
  });

  it('answers under /proc, where a recursive mkdir never returns', { skip: !PROC && 'no /proc' }, async () => {
    const t0 = Date.now();
    await assert.rejects(makeDir('/proc/kiln-no-such/dir'), { code: 'ENOENT' });
    assert.ok(Date.now() - t0 < 5000);
  });

  it('kiln resize -o under /proc: a clear error and exit status 2, not a hang', { skip: !PROC && 'no /proc' }, async () => {
    const photo = await makePhoto(dir, 'p.jpg', 64, 48);
    const r = await kiln(['resize', photo, '--width', '32', '-o', '/proc/kiln-no-such/x.jpg']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /Cannot write .*x\.jpg: its directory cannot be created there/);
  });
});
