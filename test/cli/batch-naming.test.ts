/**
 * Output names of a batch whose inputs share a file name (a/x.png, b/x.png): the first on the command
 * line gets x.png whichever run ends first, so a rerun writes the same files under the same names.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { kiln } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';

const dir = tempDir();

async function image(rel: string, size: number): Promise<string> {
  const p = path.join(dir, rel);
  mkdirSync(path.dirname(p), { recursive: true });
  await sharp({ create: { width: size, height: size, channels: 3, background: '#000', noise: { type: 'gaussian', mean: 128, sigma: 40 } } })
    .png()
    .toFile(p);
  return p;
}

describe('batch output names', () => {
  it('two inputs named alike: the first given gets the plain name even when it ends last', async () => {
    // The first input is slow (a large image at high effort), the second done at once: the second
    // used to take x.webp and the first became x-2.webp.
    const slow = await image('slow/x.png', 3000);
    const fast = await image('fast/x.png', 8);
    const out = path.join(dir, 'out');
    const r = await kiln(['convert', slow, fast, '--format', 'webp', '-o', `${out}/`, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { input: string; output: string });
    const byInput = new Map(lines.map((l) => [l.input, l.output]));
    assert.equal(byInput.get(slow), path.join(out, 'x.webp'), r.stdout);
    assert.equal(byInput.get(fast), path.join(out, 'x-2.webp'), r.stdout);
    assert.equal((await sharp(path.join(out, 'x.webp')).metadata()).width, 3000);
    assert.equal((await sharp(path.join(out, 'x-2.webp')).metadata()).width, 8);
  });
});
