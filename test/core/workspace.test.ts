/**
 * Workspaces (src/core/workspace.ts): clear() readies one for the next item of a batch — what a run left
 * goes, its folders stay (emptied), and a link is removed, never followed — and a local batch reusing
 * one workspace per worker leaves every item's output right and nothing in the temp dir.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { createWorkspace } from '../../src/core/workspace.js';
import { kiln } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';

describe('workspace clear()', () => {
  it('removes files and the contents of folders, keeps the folders, and does not follow links', async () => {
    const root = tempDir('kiln-ws-');
    const outside = tempDir('kiln-ws-outside-');
    writeFileSync(path.join(outside, 'keep.txt'), 'not the workspace’s');
    const ws = await createWorkspace(root);
    mkdirSync(path.join(ws.dir, 'out', 'frames'), { recursive: true });
    writeFileSync(path.join(ws.dir, 'input.jpg'), 'x');
    writeFileSync(path.join(ws.dir, 'out', 'result.png'), 'x');
    writeFileSync(path.join(ws.dir, 'out', 'frames', '0001.png'), 'x');
    symlinkSync(outside, path.join(ws.dir, 'link'));
    await ws.clear();
    assert.deepEqual(readdirSync(ws.dir).sort(), ['out']);
    assert.deepEqual(readdirSync(path.join(ws.dir, 'out')), ['frames']);
    assert.deepEqual(readdirSync(path.join(ws.dir, 'out', 'frames')), []);
    assert.deepEqual(readdirSync(outside), ['keep.txt']);
    await ws.dispose();
    assert.equal(existsSync(ws.dir), false);
  });

  it('a batch with a broken item between good ones: each output right, the temp dir empty after', async () => {
    const dir = tempDir('kiln-ws-batch-');
    const tmp = path.join(dir, 'tmp');
    mkdirSync(tmp);
    const inputs: string[] = [];
    for (let i = 0; i < 5; i++) {
      const p = path.join(dir, `in${i}.png`);
      if (i === 2) writeFileSync(p, Buffer.from('not a PNG at all'));
      else
        await sharp({ create: { width: 40 + i * 10, height: 30, channels: 3, background: { r: 50 * i, g: 0, b: 0 } } })
          .png()
          .toFile(p);
      inputs.push(p);
    }
    const out = path.join(dir, 'out');
    const r = await kiln(['resize', ...inputs, '--width', '20', '-o', `${out}/`, '--concurrency', '2', '--json'], {
      env: { KILN_TMP_DIR: tmp },
    });
    assert.equal(r.code, 5, r.stderr);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { input: string; ok: boolean });
    assert.deepEqual(lines.map((l) => [path.basename(l.input), l.ok]).sort(), [
      ['in0.png', true],
      ['in1.png', true],
      ['in2.png', false],
      ['in3.png', true],
      ['in4.png', true],
    ]);
    for (const i of [0, 1, 3, 4]) {
      const { data, info } = await sharp(path.join(out, `in${i}.png`))
        .raw()
        .toBuffer({ resolveWithObject: true });
      assert.equal(info.width, 20);
      // Each output is its own input's (a leftover of the item before would show another red).
      assert.ok(Math.abs(data[0]! - 50 * i) <= 2, `in${i}: red ${data[0]}`);
    }
    assert.deepEqual(readdirSync(tmp), []);
  });
});
