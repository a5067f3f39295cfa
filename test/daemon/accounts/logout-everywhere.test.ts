/**
 * Signing out everywhere: POST /api/auth/logout with {"everywhere": true} ends every session of the
 * caller (a lost laptop, a session seen on a shared screen). Before it, only a password change ended
 * other sessions, and an SSO account, which has no password, had no way at all.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../../helpers/server.js';
import { call, makeUser } from './http.js';

const session = (s: TestServer, token: string) => call(s, 'GET', '/api/auth/session', { token });

describe('logout everywhere', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(() => s.close());

  it('an SSO account ends all its sessions, this one included; its keys and other users are untouched', async () => {
    const u = await makeUser(s, 'sso-roamer');
    // An SSO-only account: no password, so change-password (which ends other sessions) is not open to it.
    await s.app.kiln.store.db
      .updateTable('users')
      .set({ password_hash: null, sso_provider: 'oidc', sso_subject: 'roamer' })
      .where('id', '=', u.id)
      .execute();
    const user = (await s.app.kiln.store.db.selectFrom('users').selectAll().where('id', '=', u.id).executeTakeFirstOrThrow())!;
    const { issueSession } = await import('../../../daemon/accounts/login.js');
    const laptop = (await issueSession(s.app.kiln, user)).token;
    const key = await call(s, 'POST', '/api/v1/api-keys', { token: u.token, body: { name: 'ci' } });
    assert.equal(key.status, 201);
    const other = await makeUser(s, 'bystander');

    // An API key has no session: refused as for a plain logout, nothing ended.
    const byKey = await call(s, 'POST', '/api/auth/logout', { token: key.json.key, body: { everywhere: true } });
    assert.equal(byKey.status, 409, JSON.stringify(byKey.json));
    assert.equal((await session(s, laptop)).status, 200);

    const bad = await call(s, 'POST', '/api/auth/logout', { token: u.token, body: { everywhere: 'yes' } });
    assert.equal(bad.status, 400, JSON.stringify(bad.json));
    assert.equal((await session(s, u.token)).status, 200, 'a refused request ends nothing');

    const r = await call(s, 'POST', '/api/auth/logout', { token: u.token, body: { everywhere: true } });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.equal(r.json.sessionsEnded, 2);
    assert.equal((await session(s, laptop)).status, 401, 'the other session is over');
    assert.equal((await session(s, u.token)).status, 401, 'this session is over too');
    assert.equal((await session(s, key.json.key)).status, 200, 'API keys are revoked on their own');
    assert.equal((await session(s, other.token)).status, 200, "another user's session stays");

    // A plain logout still ends only the calling session.
    const again = (await issueSession(s.app.kiln, user)).token;
    const stays = (await issueSession(s.app.kiln, user)).token;
    const plain = await call(s, 'POST', '/api/auth/logout', { token: again });
    assert.equal(plain.status, 200);
    assert.equal((await session(s, again)).status, 401);
    assert.equal((await session(s, stays)).status, 200);
  });
});
