/**
 * The initialised LibreOffice profile kept between runs (src/engines/office/profile-template.ts): made
 * once per LibreOffice and user, used only from a private directory and only while it keeps the macro
 * lockdown; a conversion from a restored profile skips soffice's first-start pass and still converts.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { officeConvert, shutdownOffice } from '../../../src/engines/office.js';
import { cacheRoot, keepProfile, restoreProfile } from '../../../src/engines/office/profile-template.js';
import { tempDir } from '../../helpers/fixtures.js';

const SEED = [
  '<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="MacroSecurityLevel" oor:op="fuse"><value>3</value></prop></item>',
  '<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="DisableMacrosExecution" oor:op="fuse"><value>true</value></prop></item>',
  '<item oor:path="/org.openoffice.Office.Update/Jobs"><prop oor:name="AutoCheckEnabled" oor:op="fuse"><value>false</value></prop></item>',
].join('\n');

describe('the kept LibreOffice profile', () => {
  const dir = tempDir('kiln-office-template-');
  const savedTmp = process.env.TMPDIR;
  const bin = path.join(dir, 'soffice.bin');

  /** A profile as the first-start pass leaves it: user/config, and the settings file without the Update item. */
  const initialised = (name: string, xcu = SEED.split('\n').slice(0, 2).join('\n')) => {
    const p = path.join(dir, name);
    mkdirSync(path.join(p, 'user', 'config'), { recursive: true });
    writeFileSync(path.join(p, 'user', 'config', 'autotbl.fmt'), 'table formats');
    writeFileSync(path.join(p, 'user', 'registrymodifications.xcu'), `<oor:items>\n${xcu}\n</oor:items>\n`);
    return p;
  };
  const fresh = (name: string) => {
    const p = path.join(dir, name);
    mkdirSync(path.join(p, 'user'), { recursive: true });
    return p;
  };

  before(() => {
    // os.tmpdir() reads TMPDIR on each call: the kept copies go into this test's directory.
    process.env.TMPDIR = path.join(dir, 'tmp');
    mkdirSync(process.env.TMPDIR, { recursive: true });
    writeFileSync(bin, 'a LibreOffice');
  });
  after(() => {
    if (savedTmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = savedTmp;
  });

  it('is kept once and restored into a new profile', async () => {
    assert.equal(await restoreProfile(fresh('none-yet'), bin, SEED), false, 'nothing kept yet');
    await keepProfile(initialised('first'), bin, SEED);
    const next = fresh('second');
    assert.equal(await restoreProfile(next, bin, SEED), true);
    assert.equal(readFileSync(path.join(next, 'user', 'config', 'autotbl.fmt'), 'utf8'), 'table formats');
    assert.match(readFileSync(path.join(next, 'user', 'registrymodifications.xcu'), 'utf8'), /DisableMacrosExecution/);
    // A second keep leaves the first copy as it is, and no half-made copy behind.
    await keepProfile(initialised('other', `${SEED.split('\n').slice(0, 2).join('\n')}\n<item>changed</item>`), bin, SEED);
    const third = fresh('third');
    assert.equal(await restoreProfile(third, bin, SEED), true);
    assert.doesNotMatch(readFileSync(path.join(third, 'user', 'registrymodifications.xcu'), 'utf8'), /changed/);
    assert.deepEqual(
      readdirSync(cacheRoot()).filter((d) => d.endsWith('.tmp')),
      [],
    );
  });

  it('belongs to the settings and the LibreOffice it was made with', async () => {
    assert.equal(await restoreProfile(fresh('other-seed'), bin, `${SEED}\n<item>more</item>`), false);
    const other = path.join(dir, 'other-soffice.bin');
    writeFileSync(other, 'a LibreOffice');
    assert.equal(await restoreProfile(fresh('other-bin'), other, SEED), false);
  });

  it('is not used once its macro lockdown is gone', async () => {
    const seed = `${SEED}\n<!-- b -->`;
    await keepProfile(initialised('unlocked', SEED.split('\n')[0]), bin, seed);
    assert.equal(await restoreProfile(fresh('from-unlocked'), bin, seed), false);
  });

  it('is not used from a directory others can write to', async (t) => {
    if (process.platform === 'win32') return t.skip('POSIX modes');
    const root = cacheRoot();
    chmodSync(root, 0o777);
    try {
      assert.equal(await restoreProfile(fresh('shared'), bin, SEED), false);
      assert.equal(existsSync(path.join(dir, 'shared', 'user', 'config')), false);
    } finally {
      chmodSync(root, 0o700);
    }
    assert.equal(await restoreProfile(fresh('private-again'), bin, SEED), true);
  });

  it('LibreOffice converts from a profile it did not initialise itself, and the next start uses the kept one', async () => {
    const rtf = path.join(dir, 'note.rtf');
    writeFileSync(rtf, '{\\rtf1\\ansi{\\fonttbl\\f0\\fswiss Helvetica;}\\f0\\pard Kept profile {\\b works}\\par}');
    const work = path.join(dir, 'work');
    mkdirSync(work, { recursive: true });
    const convert = async () => {
      const pdf = await officeConvert(rtf, 'rtf', { target: 'pdf:writer_pdf_Export', outExt: 'pdf', workDir: work });
      assert.match(readFileSync(pdf).subarray(0, 5).toString(), /^%PDF-/);
    };
    try {
      await convert();
      // The first start in this TMPDIR initialised a profile and kept it (the fake binary's copies are others).
      const kept = readdirSync(cacheRoot()).filter((d) => existsSync(path.join(cacheRoot(), d, 'user', 'config')));
      assert.ok(kept.length >= 2, `a copy for the real LibreOffice beside the test's: ${kept.join(', ')}`);
      await shutdownOffice();
      const t = Date.now();
      await convert();
      assert.ok(Date.now() - t < 60_000);
    } finally {
      await shutdownOffice();
    }
  });
});
