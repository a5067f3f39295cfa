import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { kiln } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/fixtures.js';
import { makeTextPdf, numbered, pageTexts } from './pdf-helpers.js';

const dir = tempDir('kiln-pdf-cli-');

describe('PDF tools from the command line', () => {
  it('kiln merge-pdf a.pdf b.pdf -o m.pdf', async () => {
    const a = await makeTextPdf(path.join(dir, 'a.pdf'), ['A one', 'A two']);
    const b = await makeTextPdf(path.join(dir, 'b.pdf'), ['B one']);
    const out = path.join(dir, 'm.pdf');
    const r = await kiln(['merge-pdf', a, b, '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(pageTexts(out), ['A one', 'A two', 'B one']);
  });

  it('kiln extract-pages in.pdf --range 1-2,z', async () => {
    const src = await makeTextPdf(path.join(dir, 'in.pdf'), numbered(5));
    const out = path.join(dir, 'x.pdf');
    const r = await kiln(['extract-pages', src, '--range', '1-2,z', '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(pageTexts(out), ['Page 1', 'Page 2', 'Page 5']);
  });

  it('a range beyond the last page exits with the usage code and names the page count', async () => {
    const src = await makeTextPdf(path.join(dir, 'in2.pdf'), numbered(3));
    const r = await kiln(['extract-pages', src, '--range', '2-7', '-o', path.join(dir, 'never.pdf')]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /3 pages/);
    assert.doesNotMatch(r.stderr, /\.\./, 'one period, not "3 pages.."');
  });

  it('setting problems read as one sentence: "--password must not be empty", "--range r0 … page)."', async () => {
    const src = await makeTextPdf(path.join(dir, 'in3.pdf'), numbered(2));
    const empty = await kiln(['unlock-pdf', src, '--password', '', '-o', path.join(dir, 'never3.pdf')]);
    assert.equal(empty.code, 2, empty.stderr);
    assert.match(empty.stderr, /--password must not be empty\.\n/);
    const r0 = await kiln(['rotate-pdf', src, '--range', 'r0', '-o', path.join(dir, 'never4.pdf')]);
    assert.equal(r0.code, 2, r0.stderr);
    assert.match(r0.stderr, /--range r0 is not a page \(r1 is the last page\)\.\n/);
  });

  it('split-pdf --mode every giving one part writes it to -o one.pdf (was "writes 1 files here", exit 2)', async () => {
    const src = await makeTextPdf(path.join(dir, 'in4.pdf'), numbered(3));
    const one = path.join(dir, 'one.pdf');
    const r = await kiln(['split-pdf', src, '--mode', 'every', '--every-n', '5', '-o', one]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(pageTexts(one), ['Page 1', 'Page 2', 'Page 3']);
    const png = await kiln(['split-pdf', src, '--mode', 'every', '--every-n', '5', '-o', path.join(dir, 'one.png')]);
    assert.equal(png.code, 2, 'another extension still asks for a pattern');
    assert.match(png.stderr, /writes 1 file here/);
    const two = await kiln(['split-pdf', src, '--mode', 'every', '--every-n', '2', '-o', path.join(dir, 'two.pdf')]);
    assert.equal(two.code, 2);
    assert.match(two.stderr, /writes 2 files here/);
  });

  it('an encrypted PDF exits with the input code and points at unlock-pdf', async () => {
    const src = await makeTextPdf(path.join(dir, 'plain.pdf'), numbered(2));
    const locked = path.join(dir, 'locked.pdf');
    assert.equal((await kiln(['protect-pdf', src, '--user-password', 'pw', '-o', locked])).code, 0);
    const r = await kiln(['rotate-pdf', locked, '-o', path.join(dir, 'rot.pdf')]);
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stderr, /password-protected.*unlock-pdf/);
    const u = await kiln(['unlock-pdf', locked, '--password', 'pw', '-o', path.join(dir, 'open.pdf')]);
    assert.equal(u.code, 0, u.stderr);
    assert.deepEqual(pageTexts(path.join(dir, 'open.pdf')), ['Page 1', 'Page 2']);
  });
});
