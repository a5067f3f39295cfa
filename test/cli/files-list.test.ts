/**
 * `kiln files list` as a table a person reads: one very long name must not pad every other line to
 * its width (names are up to 200 bytes), and names in wide scripts line up by their display width.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { it } from 'node:test';
import { kiln } from '../helpers/cli.js';
import { makeImage, tempDir } from '../helpers/fixtures.js';

it('keeps the columns of kiln files list narrow beside a very long name', async () => {
  const dir = tempDir('kiln-files-list-');
  const env = { KILN_SERVER: '', KILN_API_KEY: '', XDG_CONFIG_HOME: path.join(dir, 'cfg'), KILN_DATA_DIR: path.join(dir, 'data') };
  const png = await makeImage(dir, 'p.png', 8, 8, { format: 'png' });
  const long = `${'x'.repeat(180)}.png`;
  for (const name of [long, 'short.png', '写真.png']) assert.equal((await kiln(['files', 'upload', png, '--name', name], { env })).code, 0);
  const list = await kiln(['files', 'list'], { env });
  assert.equal(list.code, 0, list.stderr);
  const lines = list.stdout.trimEnd().split('\n');
  const short = lines.find((l) => l.includes('short.png'))!;
  const wide = lines.find((l) => l.includes('写真.png'))!;
  // The line of the short name is not padded out to the 184-character one.
  assert.ok(short.length < 140, short);
  // 写真 takes four columns on a terminal: its version column starts where short.png's does.
  const col = (l: string) => [...l.slice(0, l.indexOf('  v1'))].reduce((n, ch) => n + (/[\u3000-\u9fff]/.test(ch) ? 2 : 1), 0);
  assert.equal(col(wide), col(short), `${wide}\n${short}`);
  assert.ok(
    lines.some((l) => l.includes(long)),
    'the long name is shown whole',
  );
});
