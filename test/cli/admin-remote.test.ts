/**
 * `kiln admin …` against a real daemon through its API (remote mode), with the real kiln binary. Each
 * CLI start costs a second or more on a loaded machine, so every invocation checks something new.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ERROR_TABLE } from '../../src/core/errors.js';
import { call, makeUser, STRONG } from '../daemon/accounts/http.js';
import { kiln } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';
import { login, startServer, type TestServer } from '../helpers/server.js';

describe('kiln admin against a server', () => {
  const dir = tempDir('kiln-admin-remote-');
  let s: TestServer;
  let adminKey: string;
  before(async () => {
    s = await startServer();
    adminKey = (await call(s, 'POST', '/api/v1/api-keys', { body: { name: 'ops' } })).json.key;
  });
  after(() => s.close());

  // An empty config dir: the server comes from --server (or KILN_SERVER), the key from KILN_API_KEY.
  const env = (key: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
    XDG_CONFIG_HOME: path.join(dir, 'cfg'),
    KILN_SERVER: '',
    KILN_API_KEY: key,
    DATABASE_URL: s.config.databaseUrl ?? '',
    ...extra,
  });
  const admin = (args: string[], opts: { input?: string; key?: string; server?: boolean } = {}) =>
    kiln(['admin', ...args, ...(opts.server === false ? [] : ['--server', s.url])], { input: opts.input, env: env(opts.key ?? adminKey) });

  it('users add / list / set-role / reset-password / mfa-reset, keys list / revoke, users delete', async () => {
    const add = await admin(['users', 'add', 'olga', 'user'], { input: `${STRONG}\n` });
    assert.equal(add.code, 0, add.stderr);
    assert.match(add.stdout, /^Created olga \(user\)\.\n$/);
    assert.ok(await login(s.url, 'olga', STRONG));

    // KILN_SERVER instead of --server: the same choice as the tool commands.
    const list = await kiln(['admin', 'users', 'list'], { env: env(adminKey, { KILN_SERVER: s.url }) });
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /^USER +ROLE +TEAM +MFA SSO\n/);
    assert.match(list.stdout, /^olga +user +- +- {3}-$/m);
    assert.match(list.stdout, /^admin +admin /m);

    const role = await admin(['users', 'set-role', 'olga', 'admin']);
    assert.equal(role.code, 0, role.stderr);
    assert.equal(role.stdout, 'olga is now admin.\n');
    assert.equal(
      (await call(s, 'GET', '/api/auth/users')).json.users.find((u: { username: string }) => u.username === 'olga').role,
      'admin',
    );

    const oldSession = await login(s.url, 'olga', STRONG);
    const reset = await admin(['users', 'reset-password', 'olga', '--json'], { input: 'Fresh-New-Pass-5\n' });
    assert.equal(reset.code, 0, reset.stderr);
    assert.deepEqual(JSON.parse(reset.stdout), { username: 'olga', ok: true });
    assert.equal((await call(s, 'GET', '/api/auth/session', { token: oldSession })).status, 401, 'sessions end with the reset');
    assert.equal((await call(s, 'POST', '/api/auth/login', { token: null, body: { username: 'olga', password: STRONG } })).status, 401);
    const t = await login(s.url, 'olga', 'Fresh-New-Pass-5');

    const { Secret, TOTP } = await import('otpauth');
    const e = (await call(s, 'POST', '/api/auth/mfa/enroll', { token: t, body: { password: 'Fresh-New-Pass-5' } })).json;
    assert.equal(
      (
        await call(s, 'POST', '/api/auth/mfa/verify', {
          token: t,
          body: { code: new TOTP({ secret: Secret.fromBase32(e.secret) }).generate() },
        })
      ).status,
      200,
    );
    assert.equal(
      (await call(s, 'POST', '/api/auth/login', { token: null, body: { username: 'olga', password: 'Fresh-New-Pass-5' } })).json
        .requiresMfa,
      true,
    );
    const m = await admin(['mfa-reset', 'olga']);
    assert.equal(m.code, 0, m.stderr);
    assert.match(m.stdout, /^MFA of olga is off/);
    assert.ok(
      (await call(s, 'POST', '/api/auth/login', { token: null, body: { username: 'olga', password: 'Fresh-New-Pass-5' } })).json.token,
    );
    // The server audits the change under the key's owner, not the local operator.
    assert.equal((await call(s, 'GET', '/api/v1/admin/audit?event=mfa.reset')).json.events[0].actor.username, 'admin');

    const k = (await call(s, 'POST', '/api/v1/api-keys', { token: t, body: { name: 'olga-laptop' } })).json;
    assert.equal((await call(s, 'GET', '/api/auth/session', { token: k.key })).status, 200);
    const keys = await admin(['keys', 'list', '--json', '--user', 'olga']);
    assert.equal(keys.code, 0, keys.stderr);
    const listed = JSON.parse(keys.stdout) as { id: string; name: string; owner: { username: string } }[];
    assert.deepEqual(
      listed.map((x) => [x.id, x.name, x.owner.username]),
      [[k.id, 'olga-laptop', 'olga']],
    );
    assert.ok(!keys.stdout.includes(k.key), 'never the key itself');

    const revoke = await admin(['keys', 'revoke', k.id]);
    assert.equal(revoke.code, 0, revoke.stderr);
    assert.equal(revoke.stdout, `Revoked ${k.id}.\n`);
    // Through the server the verification cache forgets the key at once: no restart needed.
    assert.equal((await call(s, 'GET', '/api/auth/session', { token: k.key })).status, 401);
    const again = await admin(['keys', 'revoke', k.id]);
    assert.equal(again.code, ERROR_TABLE.NOT_FOUND.exit);
    assert.match(again.stderr, new RegExp(`No API key ${k.id}\\.`));

    const refuse = await admin(['users', 'delete', 'olga']);
    assert.equal(refuse.code, ERROR_TABLE.USAGE_ERROR.exit);
    assert.match(refuse.stderr, /--yes/);
    const del = await admin(['users', 'delete', 'olga', '--yes']);
    assert.equal(del.code, 0, del.stderr);
    assert.match(del.stdout, /^Deleted olga with 0 job\(s\), 0 library file\(s\), 0 pipeline\(s\) and 0 watch folder\(s\)\.\n$/);
    assert.equal(
      (await call(s, 'POST', '/api/auth/login', { token: null, body: { username: 'olga', password: 'Fresh-New-Pass-5' } })).status,
      401,
    );
    const gone = await admin(['mfa-reset', 'olga']);
    assert.equal(gone.code, ERROR_TABLE.NOT_FOUND.exit);
    assert.match(gone.stderr, /No user olga\./);
  });

  it("a plain user's key gets the server's FORBIDDEN (exit 1); the server's rules hold", async () => {
    const pete = await makeUser(s, 'pete');
    const key = (await call(s, 'POST', '/api/v1/api-keys', { token: pete.token, body: { name: 'p' } })).json.key;
    const r = await admin(['users', 'list'], { key });
    assert.equal(r.code, 1);
    assert.equal(ERROR_TABLE.FORBIDDEN.exit, 1);
    assert.match(r.stderr, /This needs the permission users:manage, which the role user does not have\./);
    assert.equal(r.stdout, '');
    // The server would narrow ?all=true to pete's own keys: the CLI refuses instead.
    const k = await admin(['keys', 'list'], { key });
    assert.equal(k.code, 1);
    assert.match(k.stderr, /users:manage/);

    const last = await admin(['users', 'set-role', 'admin', 'user']);
    assert.notEqual(last.code, 0);
    assert.match(last.stderr, /last admin/);
  });

  it('--local and --data-dir act on the data dir even with a server configured', async () => {
    const both = await admin(['users', 'list', '--data-dir', s.dataDir]);
    assert.equal(both.code, ERROR_TABLE.USAGE_ERROR.exit);
    assert.match(both.stderr, /give one of them/);
    // A bogus key and a configured server: only a local run can succeed.
    const local = { KILN_SERVER: s.url, KILN_DATA_DIR: s.dataDir };
    const viaFlag = await kiln(['admin', 'users', 'list', '--json', '--local'], { env: env('kiln_bogus', local) });
    assert.equal(viaFlag.code, 0, viaFlag.stderr);
    assert.ok((JSON.parse(viaFlag.stdout) as { username: string }[]).some((u) => u.username === 'admin'));
    const viaDir = await kiln(['admin', 'keys', 'list', '--data-dir', s.dataDir], { env: env('kiln_bogus', { KILN_SERVER: s.url }) });
    assert.equal(viaDir.code, 0, viaDir.stderr);
    assert.match(viaDir.stdout, / admin +ops /);
    const remote = await kiln(['admin', 'users', 'list'], { env: env('kiln_bogus', local) });
    assert.equal(remote.code, ERROR_TABLE.UNAUTHORIZED.exit, 'without --local the configured server is asked');
  });
});
