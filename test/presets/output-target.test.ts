/**
 * Where a preset run writes (`-o`), when the place cannot take the output: refused with a usage error
 * (exit 2) before any input is converted, or, found only when writing, named with its reason and a
 * stable code, the other inputs' outputs kept and no hidden partial file left behind.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { EXIT } from '../../src/core/errors.js';
import { kiln } from '../helpers/cli.js';
import { makeImage, tempDir } from '../helpers/fixtures.js';

const dir = tempDir('kiln-preset-out-');

describe('preset output targets', () => {
  it('refuses -o through an existing file before converting anything', async () => {
    const a = await makeImage(dir, 'a.png', 8, 8, { format: 'png' });
    const b = await makeImage(dir, 'b.png', 8, 8, { format: 'png' });
    writeFileSync(path.join(dir, 'notes.txt'), 'not a directory');
    for (const [o, inputs] of [
      ['notes.txt/', [a, b]],
      ['notes.txt/x.jpg', [a]],
      ['notes.txt/deeper/x.jpg', [a]],
    ] as const) {
      const r = await kiln(['png-to-jpg', ...inputs, '-o', o, '--local'], { cwd: dir });
      // It was exit 1 with mkdir's "EEXIST: file already exists", once per input, after converting each.
      assert.equal(r.code, EXIT.USAGE, `${o}: ${r.stderr}`);
      assert.match(r.stderr, /notes\.txt is a file, not a directory/);
      assert.doesNotMatch(r.stderr, /EEXIST/);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    }
    // A directory still to be made is made.
    const ok = await kiln(['png-to-jpg', a, '-o', 'new/sub/a.jpg', '--local'], { cwd: dir });
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal((await sharp(path.join(dir, 'new/sub/a.jpg')).metadata()).format, 'jpeg');
  });

  it('names an output that cannot be written, keeps the others and leaves no partial file', async () => {
    const a = await makeImage(dir, 'c.png', 8, 8, { format: 'png' });
    const b = await makeImage(dir, 'd.png', 8, 8, { format: 'png' });
    const out = path.join(dir, 'out');
    mkdirSync(path.join(out, 'c.jpg'), { recursive: true });
    const r = await kiln(['png-to-jpg', a, b, '-o', `${out}/`, '--local'], { cwd: dir });
    assert.equal(r.code, EXIT.PARTIAL, r.stderr);
    // It was the raw rename error naming the hidden .c.jpg.kiln-partial-… file.
    assert.match(r.stderr, /Cannot write out\/c\.jpg: a directory of that name is in the way/);
    assert.doesNotMatch(r.stderr, /kiln-partial/);
    assert.deepEqual(readdirSync(out).sort(), ['c.jpg', 'd.jpg']);
    assert.equal((await sharp(path.join(out, 'd.jpg')).metadata()).format, 'jpeg');
  });
});
