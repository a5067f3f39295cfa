/**
 * `kiln admin …` on a data dir, checked through a real daemon on the same data. Each CLI start costs a
 * few seconds on a loaded machine, so every invocation here checks something the others do not.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ERROR_TABLE } from '../../../src/core/errors.js';
import { kiln } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/fixtures.js';
import { login, startServer, type TestServer } from '../../helpers/server.js';
import { call, makeUser, STRONG } from './http.js';

describe('kiln admin (local data dir)', () => {
  let s: TestServer;
  let env: NodeJS.ProcessEnv;
  before(async () => {
    s = await startServer();
    env = { DATABASE_URL: s.config.databaseUrl ?? '' };
  });
  after(() => s.close());

  const admin = (args: string[], input?: string) => kiln(['admin', ...args, '--data-dir', s.dataDir], { input, env });

  it('users add / list / set-role / reset-password / delete, with the password from stdin', async () => {
    const add = await admin(['users', 'add', 'olga', 'user'], `${STRONG}\n`);
    assert.equal(add.code, 0, add.stderr);
    assert.match(add.stdout, /Created olga \(user\)/);
    assert.ok(await login(s.url, 'olga', STRONG));
    const weak = await admin(['users', 'add', 'weakling'], 'abc\n');
    assert.notEqual(weak.code, 0);
    assert.match(weak.stderr, /too weak/);

    const list = await admin(['users', 'list', '--json']);
    assert.equal(list.code, 0, list.stderr);
    const users = JSON.parse(list.stdout) as { username: string; role: string }[];
    assert.deepEqual(users.map((u) => u.username).sort(), ['admin', 'olga']);

    assert.equal((await admin(['users', 'set-role', 'olga', 'admin'])).code, 0);
    assert.equal(
      (await call(s, 'GET', '/api/auth/users')).json.users.find((u: { username: string }) => u.username === 'olga').role,
      'admin',
    );

    const token = await login(s.url, 'olga', STRONG);
    const reset = await admin(['users', 'reset-password', 'olga'], 'Fresh-New-Pass-5\n');
    assert.equal(reset.code, 0, reset.stderr);
    assert.equal((await call(s, 'GET', '/api/auth/session', { token })).status, 401, 'sessions end with the reset');
    assert.ok(await login(s.url, 'olga', 'Fresh-New-Pass-5'));

    const refuse = await admin(['users', 'delete', 'olga']);
    assert.notEqual(refuse.code, 0);
    assert.match(refuse.stderr, /--yes/);
    const del = await admin(['users', 'delete', 'olga', '--yes']);
    assert.equal(del.code, 0, del.stderr);
    assert.match(del.stdout, /Deleted olga with 0 job\(s\), 0 library file\(s\), 0 pipeline\(s\) and 0 watch folder\(s\)\./);
    assert.equal(
      (await call(s, 'POST', '/api/auth/login', { token: null, body: { username: 'olga', password: 'Fresh-New-Pass-5' } })).status,
      401,
    );
    const nobody = await admin(['users', 'delete', 'olga', '--yes']);
    assert.notEqual(nobody.code, 0, 'already gone');
    assert.match(nobody.stderr, /No user olga/);
  });

  it('a data dir with no kiln database is NOT_FOUND, not a new empty database (a typo in --data-dir)', async () => {
    const typo = path.join(tempDir('kiln-admin-typo-'), 'var-lib-kilm');
    // It used to make a new database there: `users list` showed [] with exit 0, `users create` added a
    // user no daemon would ever see.
    for (const args of [
      ['users', 'list', '--json'],
      ['users', 'create', 'ghost', '--service'],
    ]) {
      const r = await kiln(['admin', ...args, '--data-dir', typo], { env: { DATABASE_URL: '' } });
      assert.equal(r.code, ERROR_TABLE.NOT_FOUND.exit, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /No kiln database in .*var-lib-kilm/);
    }
    assert.equal(existsSync(typo), false, 'nothing created');
  });

  it('refuses to demote or delete the last admin', async () => {
    const r = await admin(['users', 'set-role', 'admin', 'user']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /last admin/);
    assert.notEqual((await admin(['users', 'delete', 'admin', '--yes'])).code, 0);
    assert.equal((await call(s, 'GET', '/api/auth/session')).status, 200);
  });

  it('keys list / revoke and mfa-reset', async () => {
    const u = await makeUser(s, 'pete');
    const k = (await call(s, 'POST', '/api/v1/api-keys', { token: u.token, body: { name: 'pete-laptop' } })).json;
    const list = await admin(['keys', 'list', '--json', '--user', 'pete']);
    assert.equal(list.code, 0, list.stderr);
    const keys = JSON.parse(list.stdout);
    assert.equal(keys.length, 1);
    assert.equal(keys[0].owner.username, 'pete');
    assert.ok(!list.stdout.includes(k.key));
    assert.equal((await admin(['keys', 'revoke', k.id])).code, 0);
    // A fresh server has no verification cache: the key is gone.
    s = await s.restart();
    assert.equal((await call(s, 'GET', '/api/auth/session', { token: k.key })).status, 401);

    const { Secret, TOTP } = await import('otpauth');
    const t = await login(s.url, 'pete', STRONG);
    const e = (await call(s, 'POST', '/api/auth/mfa/enroll', { token: t, body: { password: STRONG } })).json;
    const code = new TOTP({ secret: Secret.fromBase32(e.secret) }).generate();
    assert.equal((await call(s, 'POST', '/api/auth/mfa/verify', { token: t, body: { code } })).status, 200);
    assert.equal(
      (await call(s, 'POST', '/api/auth/login', { token: null, body: { username: 'pete', password: STRONG } })).json.requiresMfa,
      true,
    );
    const m = await admin(['mfa-reset', 'pete']);
    assert.equal(m.code, 0, m.stderr);
    assert.ok((await call(s, 'POST', '/api/auth/login', { token: null, body: { username: 'pete', password: STRONG } })).json.token);
    const audit = (await call(s, 'GET', '/api/v1/admin/audit?event=mfa.reset')).json.events;
    assert.equal(audit[0].actor.username, 'kiln admin (local)');
  });
});
