/**
 * Issue #22 service accounts and keys, issue #21 items 4 and 9: admin-issued keys for service accounts
 * that survive a person's password reset, rotation with a grace period, why a key stopped working
 * (error.details.reason), a key never outliving the key that made it, and a deleted user's key dying at
 * once, also when `kiln admin` deletes it on the data dir of the running daemon.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { kiln } from '../../helpers/cli.js';
import { startServer, type TestServer } from '../../helpers/server.js';
import { call, makeUser } from './http.js';

const session = (s: TestServer, token: string) => call(s, 'GET', '/api/auth/session', { token });

async function serviceAccount(s: TestServer, username: string): Promise<string> {
  const r = await call(s, 'POST', '/api/auth/users', { body: { username, service: true } });
  assert.equal(r.status, 201, JSON.stringify(r.json));
  assert.equal(r.json.user.service, true);
  return r.json.user.id;
}

function assertRefused(r: { status: number; json: any }, reason: string): void {
  assert.equal(r.status, 401, JSON.stringify(r.json));
  assert.equal(r.json.error.code, 'UNAUTHORIZED');
  assert.equal(r.json.error.details.reason, reason, JSON.stringify(r.json));
}

describe('service accounts and API keys', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer({ env: { API_KEY_ROTATE_GRACE_S: '2' } });
  });
  after(() => s.close());

  it('a service account has no password, cannot sign in, and gets keys only from an admin', async () => {
    const id = await serviceAccount(s, 'ci-bot');
    const withPw = await call(s, 'POST', '/api/auth/users', { body: { username: 'ci-bot2', service: true, password: 'Some-Pass-123' } });
    assert.equal(withPw.status, 400);
    const signIn = await call(s, 'POST', '/api/auth/login', { token: null, body: { username: 'ci-bot', password: 'anything-at-all' } });
    assert.equal(signIn.status, 401);

    const k = await call(s, 'POST', '/api/v1/api-keys', { body: { name: 'deploy', userId: id } });
    assert.equal(k.status, 201, JSON.stringify(k.json));
    assert.equal(k.json.userId, id);
    const who = await session(s, k.json.key);
    assert.equal(who.status, 200);
    assert.equal(who.json.user.username, 'ci-bot');
    assert.equal(who.json.via, 'api-key');

    // Not for people, and not by people without users:manage.
    const person = await makeUser(s, 'paula');
    const forPerson = await call(s, 'POST', '/api/v1/api-keys', { body: { name: 'x', userId: person.id } });
    assert.equal(forPerson.status, 403);
    assert.equal(forPerson.json.error.reason, 'not-a-service-account');
    assert.equal((await call(s, 'POST', '/api/v1/api-keys', { token: person.token, body: { name: 'x', userId: id } })).status, 403);
    // No password to reset, no second factor to enrol (a key is no session).
    assert.equal(
      (await call(s, 'POST', `/api/auth/users/${id}/reset-password`, { body: { newPassword: 'Brand-New-Pass-1' } })).status,
      409,
    );
    assert.equal((await call(s, 'POST', '/api/auth/mfa/enroll', { token: k.json.key, body: { password: 'x' } })).status, 403);
    const listed = (await call(s, 'GET', '/api/v1/api-keys?all=true')).json.keys.find((x: { id: string }) => x.id === k.json.id);
    assert.equal(listed.owner.username, 'ci-bot');
    assert.equal(listed.owner.service, true);
  });

  it("resetting a person's password revokes that person's keys only, never a service account's", async () => {
    const botId = await serviceAccount(s, 'ci-survivor');
    const alice = await makeUser(s, 'alice', 'admin');
    const botKey = await call(s, 'POST', '/api/v1/api-keys', { token: alice.token, body: { name: 'ci', userId: botId } });
    assert.equal(botKey.status, 201);
    const own = await call(s, 'POST', '/api/v1/api-keys', { token: alice.token, body: { name: 'mine' } });
    const reset = await call(s, 'POST', `/api/auth/users/${alice.id}/reset-password`, { body: { newPassword: 'Reset-By-Admin-9' } });
    assert.equal(reset.status, 200);
    assertRefused(await session(s, own.json.key), 'revoked');
    assert.equal((await session(s, botKey.json.key)).status, 200, 'the service key survives');
  });

  it('rotate: a new secret at once, the old one works for API_KEY_ROTATE_GRACE_S then answers 401 rotated', async () => {
    const botId = await serviceAccount(s, 'ci-rotor');
    const k = await call(s, 'POST', '/api/v1/api-keys', { body: { name: 'ci', userId: botId } });
    const r = await call(s, 'POST', `/api/v1/api-keys/${k.json.id}/rotate`);
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.equal(r.json.id, k.json.id);
    assert.notEqual(r.json.key, k.json.key);
    assert.ok(Date.parse(r.json.previousKeyValidUntil) - Date.now() <= 2000);
    assert.equal((await session(s, r.json.key)).status, 200);
    assert.equal((await session(s, k.json.key)).status, 200, 'the old secret works during the grace period');
    await new Promise((res) => setTimeout(res, 2300));
    assertRefused(await session(s, k.json.key), 'rotated');
    assert.equal((await session(s, r.json.key)).status, 200);
    // One row per key in the list, whatever its rotations.
    const keys = (await call(s, 'GET', '/api/v1/api-keys?all=true')).json.keys.filter((x: { id: string }) => x.id === k.json.id);
    assert.equal(keys.length, 1);
    // Revoking the key ends it (and a secret still in its grace period).
    const again = await call(s, 'POST', `/api/v1/api-keys/${k.json.id}/rotate`);
    assert.equal((await call(s, 'DELETE', `/api/v1/api-keys/${k.json.id}`)).status, 200);
    assertRefused(await session(s, again.json.key), 'revoked');
    assertRefused(await session(s, r.json.key), 'revoked');
    assert.equal((await call(s, 'POST', `/api/v1/api-keys/${k.json.id}/rotate`)).status, 404);
  });

  it("an admin may revoke a person's key but not rotate it: the new secret would be a credential acting as that person", async () => {
    const ann = await makeUser(s, 'ann-rotated');
    const k = await call(s, 'POST', '/api/v1/api-keys', { token: ann.token, body: { name: 'laptop' } });
    assert.equal(k.status, 201);
    const otherAdmin = await makeUser(s, 'adm-rotated', 'admin');
    const ak = await call(s, 'POST', '/api/v1/api-keys', { token: otherAdmin.token, body: { name: 'ops' } });
    for (const key of [k.json, ak.json]) {
      const r = await call(s, 'POST', `/api/v1/api-keys/${key.id}/rotate`);
      assert.equal(r.status, 403, JSON.stringify(r.json));
      assert.equal(r.json.error.reason, 'not-a-service-account');
      assert.equal(r.json.key, undefined);
      assert.equal((await session(s, key.key)).status, 200, 'the owner keeps its key, with no grace period started');
    }
    // The owner rotates its own; an admin's own rotation is not affected.
    const own = await call(s, 'POST', `/api/v1/api-keys/${k.json.id}/rotate`, { token: ann.token });
    assert.equal(own.status, 200, JSON.stringify(own.json));
    const mine = await call(s, 'POST', '/api/v1/api-keys', { body: { name: 'admin-own' } });
    assert.equal((await call(s, 'POST', `/api/v1/api-keys/${mine.json.id}/rotate`)).status, 200);
    assert.equal((await call(s, 'DELETE', `/api/v1/api-keys/${k.json.id}`)).status, 200, 'revoking stays possible');
    const local = await kiln(['keys', 'rotate', ak.json.id, '--data-dir', s.dataDir], {
      env: { DATABASE_URL: s.config.databaseUrl ?? '' },
    });
    assert.notEqual(local.code, 0, 'not on the data dir either');
    assert.match(local.stderr, /is a person, not a service account/);
  });

  it('every refusal says why: expired, owner-disabled, unknown; a malformed key is told about API keys', async () => {
    const u = await makeUser(s, 'reasons');
    const soon = await call(s, 'POST', '/api/v1/api-keys', {
      token: u.token,
      body: { name: 'short', expiresAt: new Date(Date.now() + 1200).toISOString() },
    });
    assert.equal((await session(s, soon.json.key)).status, 200);
    await new Promise((res) => setTimeout(res, 1400));
    assertRefused(await session(s, soon.json.key), 'expired');

    const live = await call(s, 'POST', '/api/v1/api-keys', { token: u.token, body: { name: 'live' } });
    assert.equal((await session(s, live.json.key)).status, 200);
    assert.equal((await call(s, 'PUT', `/api/auth/users/${u.id}`, { body: { disabled: true } })).status, 200);
    assertRefused(await session(s, live.json.key), 'owner-disabled');
    assert.equal((await session(s, u.token)).status, 401, 'sessions end when the account is disabled');
    assert.equal(
      (await call(s, 'POST', '/api/auth/login', { token: null, body: { username: 'reasons', password: u.password } })).status,
      401,
    );
    assert.equal((await call(s, 'PUT', `/api/auth/users/${u.id}`, { body: { disabled: false } })).status, 200);
    assert.equal((await session(s, live.json.key)).status, 200);

    assertRefused(await session(s, `si_${'0'.repeat(96)}`), 'unknown');
    const malformed = await session(s, 'si_abc123');
    assertRefused(malformed, 'unknown');
    assert.match(malformed.json.error.message, /API key/);
    assert.doesNotMatch(malformed.json.error.message, /session/);
  });

  it('a revoked key replayed is refused from the cache, not by a scrypt per request', async () => {
    const u = await makeUser(s, 'replayer');
    const k = await call(s, 'POST', '/api/v1/api-keys', { token: u.token, body: { name: 'old-ci' } });
    assert.equal((await session(s, k.json.key)).status, 200);
    assert.equal((await call(s, 'DELETE', `/api/v1/api-keys/${k.json.id}`, { token: u.token })).status, 200);
    // The first refusal verifies the secret (one scrypt, ~40 ms of CPU); the replays find it cached.
    let t = performance.now();
    assertRefused(await session(s, k.json.key), 'revoked');
    const first = performance.now() - t;
    const REPLAYS = 30;
    t = performance.now();
    for (let i = 0; i < REPLAYS; i++) assertRefused(await session(s, k.json.key), 'revoked');
    const replay = (performance.now() - t) / REPLAYS;
    assert.ok(replay < first / 3, `a replay took ${replay.toFixed(1)} ms, the first refusal ${first.toFixed(1)} ms`);
  });

  it('a key never outlives the key that made it (#21.4)', async () => {
    const u = await makeUser(s, 'minter2');
    const parent = await call(s, 'POST', '/api/v1/api-keys', { token: u.token, body: { name: 'parent', expiresInDays: 1 } });
    const child = await call(s, 'POST', '/api/v1/api-keys', { token: parent.json.key, body: { name: 'child' } });
    assert.equal(child.status, 201);
    assert.equal(child.json.expiresAt, parent.json.expiresAt, 'inherits the parent expiry instead of none');
    const longer = await call(s, 'POST', '/api/v1/api-keys', { token: parent.json.key, body: { name: 'longer', expiresInDays: 30 } });
    assert.equal(longer.status, 400);
    assert.equal(longer.json.error.reason, 'expiry-beyond-parent');
    const shorter = await call(s, 'POST', '/api/v1/api-keys', { token: parent.json.key, body: { name: 'shorter', expiresInDays: 0.5 } });
    assert.equal(shorter.status, 201);
    // Rotating a non-expiring key with an expiring one bounds the rotated key too.
    const forever = await call(s, 'POST', '/api/v1/api-keys', { token: u.token, body: { name: 'forever' } });
    assert.equal(forever.json.expiresAt, null, 'a session may make a key that does not expire');
    const rotated = await call(s, 'POST', `/api/v1/api-keys/${forever.json.id}/rotate`, { token: parent.json.key });
    assert.equal(rotated.json.expiresAt, parent.json.expiresAt);
  });

  it('a rotated-out secret, alive only for its grace period, cannot mint or rotate to a key that outlives it', async () => {
    const u = await makeUser(s, 'leaky');
    const k = await call(s, 'POST', '/api/v1/api-keys', { token: u.token, body: { name: 'ci', expiresInDays: 30 } });
    const rotated = await call(s, 'POST', `/api/v1/api-keys/${k.json.id}/rotate`, { token: u.token });
    assert.equal(rotated.status, 200, JSON.stringify(rotated.json));
    const graceEnd = Date.parse(rotated.json.previousKeyValidUntil);
    // The old (leaked) secret made a key living 30 days, or none at all, out of one that dies in 2 s.
    const child = await call(s, 'POST', '/api/v1/api-keys', { token: k.json.key, body: { name: 'persist' } });
    assert.equal(child.status, 201, JSON.stringify(child.json));
    assert.ok(child.json.expiresAt !== null && Date.parse(child.json.expiresAt) <= graceEnd, `child expires ${child.json.expiresAt}`);
    const longer = await call(s, 'POST', '/api/v1/api-keys', { token: k.json.key, body: { name: 'longer', expiresInDays: 1 } });
    assert.equal(longer.status, 400, JSON.stringify(longer.json));
    assert.equal(longer.json.error.reason, 'expiry-beyond-parent');
    // Rotating again with the old secret: the new secret dies with it too.
    const again = await call(s, 'POST', `/api/v1/api-keys/${k.json.id}/rotate`, { token: k.json.key });
    assert.equal(again.status, 200, JSON.stringify(again.json));
    assert.ok(Date.parse(again.json.expiresAt) <= graceEnd, `re-rotated key expires ${again.json.expiresAt}`);
    await new Promise((res) => setTimeout(res, Math.max(0, graceEnd - Date.now()) + 300));
    assertRefused(await session(s, child.json.key), 'expired');
    assertRefused(await session(s, again.json.key), 'expired');
  });

  it("deleting a user stops its key at once, also when `kiln admin users delete` runs on the daemon's data dir (#21.9)", async () => {
    const u = await makeUser(s, 'leaver');
    const k = await call(s, 'POST', '/api/v1/api-keys', { token: u.token, body: { name: 'cached' } });
    // Twice: the second answer comes from the verification cache.
    assert.equal((await session(s, k.json.key)).status, 200);
    assert.equal((await session(s, k.json.key)).status, 200);
    const del = await kiln(['admin', 'users', 'delete', 'leaver', '--yes', '--data-dir', s.dataDir], {
      env: { DATABASE_URL: s.config.databaseUrl ?? '' },
    });
    assert.equal(del.code, 0, del.stderr);
    assertRefused(await session(s, k.json.key), 'unknown');
  });
});
