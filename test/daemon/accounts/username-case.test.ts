/**
 * Case variants of a username are one name, also when they are registered at the same moment: the
 * database holds the rule (migration 0770), not only the look-up before the insert.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { userForIdentity } from '../../../daemon/accounts/sso.js';
import { migrationDb } from '../../helpers/migration-db.js';
import { startServer, type TestServer } from '../../helpers/server.js';
import { call, STRONG } from './http.js';

describe('usernames differing only in case', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(() => s.close());

  it('registered at once, one gets the name and the others 409', async () => {
    const names = ['bob', 'Bob', 'BOB', 'bOb'];
    const rs = await Promise.all(names.map((username) => call(s, 'POST', '/api/auth/register', { body: { username, password: STRONG } })));
    assert.deepEqual(rs.map((r) => r.status).sort(), [201, 409, 409, 409], JSON.stringify(rs.map((r) => r.json)));
    for (const r of rs.filter((x) => x.status === 409)) assert.equal(r.json.error.code, 'CONFLICT');
    const users = await call(s, 'GET', '/api/auth/users');
    assert.equal(users.json.users.filter((u: { username: string }) => u.username.toLowerCase() === 'bob').length, 1);
  });

  it('service accounts too', async () => {
    const rs = await Promise.all(['ci', 'CI'].map((username) => call(s, 'POST', '/api/auth/users', { body: { username, service: true } })));
    assert.deepEqual(rs.map((r) => r.status).sort(), [201, 409]);
  });

  it('first SSO sign-ins of two identities calling themselves dana and Dana at once each get an account', async () => {
    const ids = ['dana', 'Dana', 'DANA'].map((username, i) => ({ provider: 'oidc' as const, subject: `sub-${i}`, username, groups: [] }));
    const made = await Promise.all(ids.map((id) => userForIdentity(s.app.kiln, id, undefined)));
    const names = made.map((m) => m.user.username.toLowerCase()).sort();
    assert.deepEqual(names, ['dana', 'dana-2', 'dana-3']);
    assert.ok(made.every((m) => m.created));
  });
});

describe('one account per SSO identity', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(() => s.close());

  it('the same identity signing in three times at once (two tabs, a double click) gets one account', async () => {
    const id = { provider: 'oidc' as const, subject: 'sub-zed', username: 'zed', groups: [] };
    const made = await Promise.all([1, 2, 3].map(() => userForIdentity(s.app.kiln, id, undefined)));
    assert.equal(new Set(made.map((m) => m.user.id)).size, 1, JSON.stringify(made.map((m) => m.user.username)));
    assert.equal(made.filter((m) => m.created).length, 1);
    const rows = await s.app.kiln.store.db.selectFrom('users').select('username').where('username', 'like', 'zed%').execute();
    assert.deepEqual(rows, [{ username: 'zed' }]);
  });
});

describe('migration 0780', () => {
  it('keeps the link of the oldest account of one identity, and refuses a second link after', async () => {
    const { db, to } = migrationDb();
    await to('0770_username_case');
    const row = (id: string, created_at: number, sso_subject: string | null) => ({
      id,
      username: id,
      username_key: id,
      password_hash: null,
      role: 'user',
      team_id: null,
      created_at,
      updated_at: created_at,
      sso_provider: sso_subject ? 'oidc' : null,
      sso_subject,
    });
    await db
      .insertInto('users')
      .values([row('u1', 2, 's'), row('u2', 1, 's'), row('u3', 3, 't'), row('u4', 4, null), row('u5', 5, null)])
      .execute();
    await to('0780_sso_link_unique');
    const links = await db.selectFrom('users').select(['id', 'sso_subject']).orderBy('id').execute();
    assert.deepEqual(links, [
      { id: 'u1', sso_subject: null },
      { id: 'u2', sso_subject: 's' },
      { id: 'u3', sso_subject: 't' },
      { id: 'u4', sso_subject: null },
      { id: 'u5', sso_subject: null },
    ]);
    await assert.rejects(
      db
        .insertInto('users')
        .values(row('u6', 6, 't'))
        .execute(),
      /UNIQUE/,
    );
    await to('0770_username_case');
    await db.destroy();
  });
});

describe('migration 0770', () => {
  it('keys the oldest of case variants made before it, keeps the others signing in, and refuses new ones', async () => {
    const { db, to } = migrationDb();
    await to('0760_library_version_numbers');
    const row = (id: string, username: string, created_at: number) => ({
      id,
      username,
      password_hash: null,
      role: 'user',
      team_id: null,
      created_at,
      updated_at: created_at,
    });
    await db
      .insertInto('users')
      .values([row('u1', 'Ann', 2), row('u2', 'ann', 1), row('u3', 'ANN', 3), row('u4', 'carl', 5)])
      .execute();
    await to('0770_username_case');
    const keys = await db.selectFrom('users').select(['id', 'username_key']).orderBy('id').execute();
    assert.deepEqual(keys, [
      { id: 'u1', username_key: null },
      { id: 'u2', username_key: 'ann' },
      { id: 'u3', username_key: null },
      { id: 'u4', username_key: 'carl' },
    ]);
    await assert.rejects(
      db
        .insertInto('users')
        .values({ ...row('u5', 'CARL', 6), username_key: 'carl' })
        .execute(),
      /UNIQUE/,
    );
    await to('0760_library_version_numbers');
    await db.destroy();
  });
});
