/**
 * A damaged configuration file (config.json under $XDG_CONFIG_HOME/kiln): every command that reads it
 * says which file and why, with the exit code of a usage error, and leaves the file as it was.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ERROR_TABLE } from '../../src/core/errors.js';
import { kiln } from '../helpers/cli.js';
import { makeImage, tempDir } from '../helpers/fixtures.js';

describe('kiln config: a damaged configuration file', () => {
  const dir = tempDir('kiln-config-file-');

  it('config list/get/set and a run all name the file and exit 2; the file is left as it was', async () => {
    const cfg = path.join(dir, 'cfg');
    const file = path.join(cfg, 'kiln', 'config.json');
    mkdirSync(path.dirname(file), { recursive: true });
    const damaged = '{"profiles": {"default": {"server": "http://127.0.0.1:1"'; // cut off mid-write
    writeFileSync(file, damaged);
    const env = { XDG_CONFIG_HOME: cfg, KILN_SERVER: '', KILN_PROFILE: '', KILN_API_KEY: '' };
    const input = await makeImage(dir, 'in.png', 8, 8);
    for (const args of [
      ['config', 'list'],
      ['config', 'get', 'server'],
      ['config', 'set', 'output', dir],
      ['resize', input, '--width', '4', '-o', path.join(dir, 'out.png')],
    ]) {
      const r = await kiln(args, { env });
      // `config list`/`get`/`set` used to print JSON.parse's bare message ("Expected ',' or '}'…"), exit 1.
      assert.equal(r.code, ERROR_TABLE.USAGE_ERROR.exit, `${args.join(' ')}: ${r.stderr}`);
      assert.ok(r.stderr.includes(`The configuration file ${file} is not valid JSON`), `${args.join(' ')}: ${r.stderr}`);
    }
    assert.equal(readFileSync(file, 'utf8'), damaged, 'left for the user to repair');
    // An empty KILN_PROFILE is the default profile (it was refused as a profile named "").
    writeFileSync(file, JSON.stringify({ profiles: { default: { server: 'http://127.0.0.1:9' } } }));
    const got = await kiln(['config', 'get', 'server'], { env });
    assert.equal(got.code, 0, got.stderr);
    assert.equal(got.stdout, 'http://127.0.0.1:9\n');
  });

  it('KILN_PROFILE naming a profile without a server is refused as --profile is, not run here', async () => {
    const cfg = path.join(dir, 'cfg-profile');
    const file = path.join(cfg, 'kiln', 'config.json');
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify({ profiles: { default: { server: 'http://127.0.0.1:9' } } }));
    const input = await makeImage(dir, 'profile-in.png', 8, 8);
    const out = path.join(dir, 'profile-out.png');
    const env = { XDG_CONFIG_HOME: cfg, KILN_SERVER: '', KILN_API_KEY: '' };
    for (const [args, extra] of [
      [['--profile', 'wrok'], {}],
      [[], { KILN_PROFILE: 'wrok' }],
    ] as const) {
      const r = await kiln(['resize', input, '--width', '4', '-o', out, '--json', ...args], { env: { ...env, ...extra } });
      // A CI job with a mistyped KILN_PROFILE ran on the build machine, exit 0, where --profile said why.
      assert.equal(r.code, ERROR_TABLE.USAGE_ERROR.exit, `${args.join(' ')} ${JSON.stringify(extra)}: ${r.stdout}`);
      assert.match(r.stderr, /Profile wrok has no server/);
      assert.equal(existsSync(out), false);
    }
  });
});
