/**
 * Where a run goes is never a surprise (issue #15 item 7, #22 key names): after `kiln login` a run says
 * once on stderr that it runs on the server (not with --quiet); `kiln logout` returns to local runs;
 * the CLI's API key is named after the kiln user who logged in.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { kiln } from '../helpers/cli.js';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { api, startServer, type TestServer } from '../helpers/server.js';

describe('login, remote runs said aloud, logout back to local', () => {
  const dir = tempDir('kiln-loginlocal-');
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(() => s.close());

  it('runs go to the server with one stderr line, then local again after logout', async () => {
    const env = { XDG_CONFIG_HOME: path.join(dir, 'cfg'), KILN_SERVER: '', KILN_API_KEY: '', KILN_CREDENTIAL_STORE: 'file' };
    const login = await kiln(['login', s.url], { env, input: `admin\n${s.adminPassword}\n` });
    assert.equal(login.code, 0, login.stderr);
    const keys = (await api(s, s.token, 'GET', '/api/v1/api-keys')).body.keys as { name: string }[];
    assert.ok(
      keys.some((k) => /^kiln CLI admin on .+@.+/.test(k.name)),
      keys.map((k) => k.name).join(', '),
    );

    const src = await makeImage(dir, 'p.png', 40, 20);
    const remote = await kiln(['resize', src, '--width', '10', '-o', path.join(dir, 'r.png')], { env });
    assert.equal(remote.code, 0, remote.stderr);
    assert.equal(remote.stderr.match(/running on /g)?.length, 1, remote.stderr);
    assert.ok(remote.stderr.includes(s.url));
    const quiet = await kiln(['resize', src, '--width', '10', '-o', path.join(dir, 'q.png'), '--quiet'], { env });
    assert.equal(quiet.code, 0, quiet.stderr);
    assert.doesNotMatch(quiet.stderr, /running on/);

    const logout = await kiln(['logout'], { env });
    assert.equal(logout.code, 0, logout.stderr);
    const local = await kiln(['resize', src, '--width', '7', '-o', path.join(dir, 'l.png')], { env });
    assert.equal(local.code, 0, local.stderr);
    assert.doesNotMatch(local.stderr, /running on|UNAUTHORIZED|key/i);
    assert.equal((await sharp(path.join(dir, 'l.png')).metadata()).width, 7);
    assert.equal((await kiln(['config', 'get', 'server'], { env })).code, 1, 'the profile has no server');
  });
});
