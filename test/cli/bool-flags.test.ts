/**
 * Boolean flags (`--enhance [bool]`) before the input: commander took the input as the flag's value
 * and refused the command ("missing required argument 'inputs'"), so `kiln ocr --enhance scan.png`
 * never ran. A boolean flag alone means true; an explicit word after it still sets it.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { kiln } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';

const dir = tempDir('kiln-bool-flags-');

describe('boolean flags', () => {
  it('a boolean flag before the input is true and leaves the input alone; an explicit value still counts', async () => {
    const img = path.join(dir, 'blank.png');
    await sharp({ create: { width: 40, height: 30, channels: 3, background: '#ffffff' } })
      .png()
      .toFile(img);
    const env = { KILN_DATA_DIR: path.join(dir, 'data') };
    const cases: [string[], boolean][] = [
      [['--enhance', img], true],
      [['--enhance', 'false', img], false],
      [[img, '--enhance'], true],
      [['--enhance=no', img], false],
    ];
    for (const [args, applied] of cases) {
      const out = path.join(dir, `out-${applied}.json`);
      const r = await kiln(['ocr', ...args, '--quality', 'fast', '-o', out, '--json'], { env });
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
      assert.equal((JSON.parse(r.stdout) as { data: { enhance: { applied: boolean } } }).data.enhance.applied, applied, args.join(' '));
    }
  });
});
