/**
 * `kiln admin users create --service` and `kiln keys create|rotate|revoke|list`, on the data dir of a
 * running daemon and against it with --server, with the real binary. Each CLI start costs a second or
 * more on a loaded machine, so every invocation checks something new.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { kiln } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/fixtures.js';
import { startServer, type TestServer } from '../../helpers/server.js';
import { call } from './http.js';

describe('kiln keys', () => {
  const dir = tempDir('kiln-keys-cli-');
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(() => s.close());

  const env = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
    XDG_CONFIG_HOME: path.join(dir, 'cfg'),
    KILN_SERVER: '',
    KILN_API_KEY: '',
    DATABASE_URL: s.config.databaseUrl ?? '',
    API_KEY_ROTATE_GRACE_S: '0',
    ...extra,
  });
  const local = (args: string[]) => kiln([...args, '--data-dir', s.dataDir, '--json'], { env: env() });
  const session = (token: string) => call(s, 'GET', '/api/auth/session', { token });

  it('on the data dir: a service account, its key, rotation and revocation act on the running daemon at once', async () => {
    const add = await kiln(['admin', 'users', 'create', 'ci', '--service', '--data-dir', s.dataDir], { env: env() });
    assert.equal(add.code, 0, add.stderr);
    assert.match(add.stdout, /service account ci/);

    const created = await local(['keys', 'create', 'deploy', '--user', 'ci', '--expires-in-days', '30']);
    assert.equal(created.code, 0, created.stderr);
    const k = JSON.parse(created.stdout);
    assert.match(k.key, /^si_[0-9a-f]{96}$/);
    assert.equal((await session(k.key)).json.user.username, 'ci');

    const rotated = await local(['keys', 'rotate', k.id]);
    assert.equal(rotated.code, 0, rotated.stderr);
    const r = JSON.parse(rotated.stdout);
    assert.equal(r.id, k.id);
    assert.equal(r.expiresAt, k.expiresAt, 'rotation keeps the expiry');
    assert.equal((await session(r.key)).status, 200);
    // API_KEY_ROTATE_GRACE_S=0 for the CLI: the old secret ends at once, and says so.
    assert.equal((await session(k.key)).json.error.details.reason, 'rotated');

    const list = await local(['keys', 'list', '--user', 'ci']);
    assert.equal(list.code, 0, list.stderr);
    assert.deepEqual(
      JSON.parse(list.stdout).map((x: { id: string }) => x.id),
      [k.id],
    );
    const revoke = await local(['keys', 'revoke', k.id]);
    assert.equal(revoke.code, 0, revoke.stderr);
    assert.equal((await session(r.key)).json.error.details.reason, 'revoked');
    const again = await local(['keys', 'revoke', k.id]);
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /No API key/);
  });

  it('with --server: your own key, or (admin) one for a service account; a person gets none from an admin', async () => {
    const adminKey = (await call(s, 'POST', '/api/v1/api-keys', { body: { name: 'ops' } })).json.key;
    await call(s, 'POST', '/api/auth/users', { body: { username: 'ci-remote', service: true } });
    const remote = (args: string[]) => kiln([...args, '--server', s.url], { env: env({ KILN_API_KEY: adminKey }) });
    const made = await remote(['keys', 'create', 'pipeline', '--user', 'ci-remote']);
    assert.equal(made.code, 0, made.stderr);
    const key = made.stdout.split('\n')[0]!;
    assert.equal((await session(key)).json.user.username, 'ci-remote');
    assert.match(made.stdout, /for ci-remote/);
    const person = await remote(['keys', 'create', 'nope', '--user', 'admin']);
    assert.equal(person.code, 0, 'the admin itself is the caller: its own key');
    const list = await remote(['keys', 'list']);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /ci-remote +pipeline/);
  });
});
