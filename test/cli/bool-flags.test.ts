/**
 * Boolean flags (`--enhance [bool]`) before the input: commander took the input as the flag's value
 * and refused the command ("missing required argument 'inputs'"), so `kiln ocr --enhance scan.png`
 * never ran. A boolean flag alone means true; an explicit word after it still sets it.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { CommanderError } from 'commander';
import sharp from 'sharp';
import { buildToolCommand, explicitBooleans } from '../../src/cli/tool-command.js';
import { TOOLS } from '../../src/tools/index.js';
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

  it('--no-FLAG sets a boolean setting to false, as the help examples write it', async () => {
    const img = path.join(dir, 'photo.jpg');
    await sharp({ create: { width: 64, height: 48, channels: 3, background: '#336699' } })
      .jpeg()
      .toFile(img);
    const progressive = async (args: string[]) => {
      const out = path.join(dir, `web-${args.join('') || 'default'}.jpg`);
      const r = await kiln(['optimize-for-web', img, '--format', 'jpeg', ...args, '-o', out]);
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
      return (await sharp(out).metadata()).isProgressive;
    };
    assert.equal(await progressive([]), true);
    // `kiln optimize-for-web --help` shows `--no-strip-metadata`, which was "unknown option" (exit 2).
    assert.equal(await progressive(['--no-progressive']), false);
    assert.equal(await progressive(['--progressive=false']), false);
    const both = await kiln(['optimize-for-web', img, '--no-progressive', '--progressive', '-o', path.join(dir, 'x.jpg')]);
    assert.equal(both.code, 0, both.stderr);
    assert.equal((await sharp(path.join(dir, 'x.jpg')).metadata()).isProgressive, true, 'the last flag given wins');
  });

  it('every example in the tools’ --help parses: no flag the command does not know', () => {
    const broken: string[] = [];
    for (const tool of TOOLS) {
      for (const example of tool.examples ?? []) {
        // Words as a shell splits them: quoted strings are one word.
        const words = [...example.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
        const cmd = buildToolCommand(tool)
          .exitOverride()
          .configureOutput({ writeErr: () => {}, writeOut: () => {} });
        cmd.action(() => {});
        try {
          cmd.parse(explicitBooleans(tool, words), { from: 'user' });
        } catch (e) {
          broken.push(`kiln ${tool.id} ${example}: ${e instanceof CommanderError ? e.message : String(e)}`);
        }
      }
    }
    assert.deepEqual(broken, []);
  });
});
