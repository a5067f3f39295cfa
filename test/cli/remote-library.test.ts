/**
 * `kiln TOOL --file-id ID --server URL` against a real daemon: the server's answer about the library
 * item reaches the user — `savedFileId` when the output became a new version, and `afterSuccessError`
 * (a warning on stderr, a field of the --json line) when it did not, e.g. on a teammate's shared item.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { createUser } from '../../daemon/store/users.js';
import { kiln } from '../helpers/cli.js';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { api, filePart, form, login, startServer, type TestServer } from '../helpers/server.js';

const dir = tempDir('kiln-remote-library-');

describe('remote runs on a library item', () => {
  let s: TestServer;
  let alice: string;
  let bob: string;
  before(async () => {
    s = await startServer();
    const team = (await api(s, s.token, 'POST', '/api/v1/teams', { name: 'studio' })).body.team.id as string;
    for (const name of ['alice', 'bob'])
      await createUser(s.app.kiln.store.db, { username: name, password: `${name}-password-1`, role: 'user', teamId: team });
    alice = await login(s.url, 'alice', 'alice-password-1');
    bob = await login(s.url, 'bob', 'bob-password-1');
  });
  after(() => s.close());

  const env = (key: string) => ({ XDG_CONFIG_HOME: path.join(dir, 'cfg'), KILN_API_KEY: key, KILN_SERVER: '' });

  it('reports savedFileId, or why the output was not saved (exit 0: the run itself succeeded)', async () => {
    const png = await makeImage(dir, 'shared.png', 40, 20, { format: 'png' });
    const up = await api(s, alice, 'POST', '/api/v1/files', await form({ file: await filePart(png), scope: 'team' }));
    assert.equal(up.status, 201, up.text);
    const id = up.body.id as string;

    const own = await kiln(['resize', '--file-id', id, '--width', '10', '-o', path.join(dir, 'a.png'), '--server', s.url, '--json'], {
      env: env(alice),
    });
    assert.equal(own.code, 0, own.stderr);
    assert.equal((JSON.parse(own.stdout) as { savedFileId?: string }).savedFileId, id);

    // bob may read alice's team item but not add a version to it: his output is his, the item unchanged.
    const out = path.join(dir, 'b.png');
    const teammate = await kiln(['resize', '--file-id', id, '--width', '8', '-o', out, '--server', s.url, '--json'], { env: env(bob) });
    assert.equal(teammate.code, 0, teammate.stderr);
    const line = JSON.parse(teammate.stdout) as { ok: boolean; savedFileId?: string; afterSuccessError?: { code: string } };
    assert.equal(line.ok, true);
    assert.equal(line.savedFileId, undefined);
    assert.equal(line.afterSuccessError?.code, 'FORBIDDEN');
    assert.equal((await sharp(out).metadata()).width, 8);
    const plain = await kiln(['resize', '--file-id', id, '--width', '8', '-o', out, '--overwrite', '--server', s.url], { env: env(bob) });
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(plain.stderr, /warning: the output was not saved to the library item: Library item shared\.png is shared with your team/);
    const versions = await api(s, alice, 'GET', `/api/v1/files/${id}/versions`);
    assert.deepEqual(
      (versions.body.versions as { version: number }[]).map((v) => v.version),
      [2, 1],
    );
  });

  it('files get and jobs download refuse -o - with --json (both on stdout) before any request, as a tool run does', async () => {
    const png = await makeImage(dir, 'stdout.png', 20, 20, { format: 'png' });
    const up = await api(s, alice, 'POST', '/api/v1/files', await form({ file: await filePart(png) }));
    const run = await kiln(
      ['resize', '--file-id', up.body.id, '--width', '10', '-o', path.join(dir, 'o.png'), '--server', s.url, '--json'],
      {
        env: env(alice),
      },
    );
    const jobId = (JSON.parse(run.stdout) as { jobId: string }).jobId;
    for (const args of [
      ['files', 'get', up.body.id as string],
      ['jobs', 'download', jobId],
    ]) {
      const r = await kiln([...args, '-o', '-', '--json', '--server', s.url], { env: env(alice) });
      assert.equal(r.code, 2, args.join(' '));
      // One JSON line and nothing else: the file's bytes used to come first, then an ok line.
      const line = JSON.parse(r.stdout) as { ok: boolean; error: { code: string } };
      assert.deepEqual([line.ok, line.error.code], [false, 'USAGE_ERROR']);
    }
  });
});
