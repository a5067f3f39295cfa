/**
 * Users, authority rules, change-password, sessions, API keys and teams over real HTTP, and every admin
 * route tried as a plain user (403 naming the permission) and as nobody (401).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { KilnError } from '../../../src/core/errors.js';
import { resolveAccountsConfig } from '../../../daemon/accounts/config.js';
import { resolveConfig } from '../../../daemon/config.js';
import { makeImage, tempDir } from '../../helpers/fixtures.js';
import { filePart, form, startServer, type TestServer } from '../../helpers/server.js';
import { call, makeUser, STRONG } from './http.js';

const dir = tempDir();

describe('users and authority rules', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(() => s.close());

  it('admin lists, registers, updates role and team, resets passwords', async () => {
    const r = await call(s, 'POST', '/api/auth/register', { body: { username: 'ann', password: STRONG } });
    assert.equal(r.status, 201);
    assert.equal(r.json.user.role, 'user');
    assert.equal(r.json.user.password, undefined);
    const dup = await call(s, 'POST', '/api/auth/register', { body: { username: 'ann', password: STRONG } });
    assert.equal(dup.status, 409);
    // A case variant is the same name to people (and to the login throttle): no look-alike accounts.
    const variant = await call(s, 'POST', '/api/auth/register', { body: { username: 'ANN', password: STRONG } });
    assert.equal(variant.status, 409, JSON.stringify(variant.json));
    assert.equal(variant.json.error.code, 'CONFLICT');
    // A misspelt field is refused, not ignored (the user would be made without the role asked for).
    const typo = await call(s, 'POST', '/api/auth/register', { body: { username: 'bob', password: STRONG, rol: 'admin' } });
    assert.equal(typo.status, 400, JSON.stringify(typo.json));
    assert.deepEqual(typo.json.error.details, [{ path: 'rol', message: 'unknown' }]);
    const weak = await call(s, 'POST', '/api/auth/register', { body: { username: 'bob', password: 'short' } });
    assert.equal(weak.status, 400);
    assert.equal(weak.json.error.code, 'VALIDATION_ERROR');
    const badRole = await call(s, 'POST', '/api/auth/register', { body: { username: 'bob', password: STRONG, role: 'root' } });
    assert.equal(badRole.status, 400);

    const list = await call(s, 'GET', '/api/auth/users');
    assert.equal(list.status, 200);
    assert.deepEqual(list.json.users.map((u: { username: string }) => u.username).sort(), ['admin', 'ann']);
    assert.ok(list.json.users.every((u: Record<string, unknown>) => !('password_hash' in u) && !('passwordHash' in u)));

    const team = await call(s, 'POST', '/api/v1/teams', { body: { name: 'Design' } });
    assert.equal(team.status, 201);
    const id = r.json.user.id;
    const up = await call(s, 'PUT', `/api/auth/users/${id}`, { body: { role: 'admin', team: 'Design' } });
    assert.equal(up.status, 200);
    assert.equal(up.json.user.role, 'admin');
    assert.deepEqual(up.json.user.team, { id: team.json.team.id, name: 'Design' });
    const unknownField = await call(s, 'PUT', `/api/auth/users/${id}`, { body: { username: 'x' } });
    assert.equal(unknownField.status, 400);

    const reset = await call(s, 'POST', `/api/auth/users/${id}/reset-password`, { body: { newPassword: 'Another-Pass-77' } });
    assert.equal(reset.status, 200);
    const old = await call(s, 'POST', '/api/auth/login', { token: null, body: { username: 'ann', password: STRONG } });
    assert.equal(old.status, 401);
    const fresh = await call(s, 'POST', '/api/auth/login', { token: null, body: { username: 'ann', password: 'Another-Pass-77' } });
    assert.equal(fresh.status, 200);
    assert.equal(fresh.json.user.role, 'admin');
    // Names are one regardless of case, at sign-in too: "ANN" is ann.
    const upper = await call(s, 'POST', '/api/auth/login', { token: null, body: { username: 'ANN', password: 'Another-Pass-77' } });
    assert.equal(upper.status, 200, JSON.stringify(upper.json));
    assert.equal(upper.json.user.username, 'ann');
    assert.equal(upper.json.user.id, id);
  });

  it('the last admin can be neither demoted nor deleted', async () => {
    const t = await call(s, 'POST', '/api/auth/register', { body: { username: 'solo-check', password: STRONG } });
    assert.equal(t.status, 201);
    const users = (await call(s, 'GET', '/api/auth/users')).json.users as { id: string; username: string; role: string }[];
    // Make admin the only admin again.
    for (const u of users)
      if (u.role === 'admin' && u.username !== 'admin')
        assert.equal((await call(s, 'PUT', `/api/auth/users/${u.id}`, { body: { role: 'user' } })).status, 200);
    const adminId = users.find((u) => u.username === 'admin')!.id;
    const demote = await call(s, 'PUT', `/api/auth/users/${adminId}`, { body: { role: 'user' } });
    assert.equal(demote.status, 409);
    assert.match(demote.json.error.message, /last admin/);
    const del = await call(s, 'DELETE', `/api/auth/users/${adminId}`);
    assert.equal(del.status, 409);
    // A disabled admin cannot administer: it does not make the enabled one "not the last".
    const dormant = await makeUser(s, 'dormant-admin', 'admin');
    assert.equal((await call(s, 'PUT', `/api/auth/users/${dormant.id}`, { body: { disabled: true } })).status, 200);
    const demoteBeside = await call(s, 'PUT', `/api/auth/users/${adminId}`, { body: { role: 'user' } });
    assert.equal(demoteBeside.status, 409, JSON.stringify(demoteBeside.json));
    assert.equal((await call(s, 'DELETE', `/api/auth/users/${adminId}`)).status, 409);
    assert.equal((await call(s, 'DELETE', `/api/auth/users/${dormant.id}`)).status, 200);
    // With a second admin, demoting the first works.
    const second = await makeUser(s, 'second-admin', 'admin');
    assert.equal((await call(s, 'PUT', `/api/auth/users/${adminId}`, { body: { role: 'user' } })).status, 200);
    assert.equal((await call(s, 'PUT', `/api/auth/users/${adminId}`, { token: second.token, body: { role: 'admin' } })).status, 200);
  });

  it('a user may never act on another user, nor on itself through admin routes', async () => {
    const u = await makeUser(s, 'carol');
    const other = await makeUser(s, 'dave');
    for (const [method, route, body] of [
      ['PUT', `/api/auth/users/${other.id}`, { role: 'user' }],
      ['PUT', `/api/auth/users/${u.id}`, { role: 'admin' }],
      ['POST', `/api/auth/users/${other.id}/reset-password`, { newPassword: 'Hijacked-Pass-1' }],
      ['DELETE', `/api/auth/users/${other.id}`, undefined],
      ['POST', `/api/auth/users/${other.id}/mfa/reset`, {}],
    ] as const) {
      const r = await call(s, method, route, { token: u.token, body });
      assert.equal(r.status, 403, `${method} ${route}`);
      assert.equal(r.json.error.code, 'FORBIDDEN');
    }
    assert.equal((await call(s, 'POST', '/api/auth/login', { token: null, body: { username: 'dave', password: STRONG } })).status, 200);
  });

  it("an admin's resets do not apply to its own account, with a session or an API key", async () => {
    const boss = await makeUser(s, 'self-reset-admin', 'admin');
    const key = (await call(s, 'POST', '/api/v1/api-keys', { token: boss.token, body: { name: 'boss-ci' } })).json.key as string;
    for (const token of [boss.token, key]) {
      const pw = await call(s, 'POST', `/api/auth/users/${boss.id}/reset-password`, { token, body: { newPassword: 'Taken-Over-Pass-3' } });
      assert.equal(pw.status, 403, JSON.stringify(pw.json));
      assert.equal(pw.json.error.reason, 'self-reset');
      assert.match(pw.json.error.message, /change-password/);
      const mfa = await call(s, 'POST', `/api/auth/users/${boss.id}/mfa/reset`, { token });
      assert.equal(mfa.status, 403, JSON.stringify(mfa.json));
      assert.equal(mfa.json.error.reason, 'self-reset');
    }
    assert.equal(
      (await call(s, 'POST', '/api/auth/login', { token: null, body: { username: 'self-reset-admin', password: STRONG } })).status,
      200,
    );
    // Another admin still may.
    assert.equal(
      (await call(s, 'POST', `/api/auth/users/${boss.id}/reset-password`, { body: { newPassword: 'Reset-By-Peer-4' } })).status,
      200,
    );
  });

  it('every admin route answers 403 naming the permission to a user, and 401 to nobody', async () => {
    const u = await makeUser(s, 'erin');
    const routes: [string, string, string, unknown?][] = [
      ['GET', '/api/auth/users', 'users:manage'],
      ['POST', '/api/auth/register', 'users:manage', { username: 'x1', password: STRONG }],
      ['PUT', `/api/auth/users/${u.id}`, 'users:manage', { role: 'admin' }],
      ['POST', `/api/auth/users/${u.id}/reset-password`, 'users:manage', { newPassword: STRONG + 'x' }],
      ['DELETE', `/api/auth/users/${u.id}`, 'users:manage'],
      ['POST', `/api/auth/users/${u.id}/mfa/reset`, 'users:manage', {}],
      ['GET', '/api/v1/teams/none', 'teams:manage'],
      ['POST', '/api/v1/teams', 'teams:manage', { name: 'T' }],
      ['PUT', '/api/v1/teams/none', 'teams:manage', { name: 'T' }],
      ['DELETE', '/api/v1/teams/none', 'teams:manage'],
      ['PUT', '/api/v1/settings', 'settings:write', { jobTtlHours: 1 }],
      ['PUT', '/api/v1/branding', 'branding:write', { productName: 'X' }],
      ['DELETE', '/api/v1/branding/logo', 'branding:write'],
      ['GET', '/api/v1/admin/audit', 'audit:read'],
    ];
    for (const [method, route, permission, body] of routes) {
      const asUser = await call(s, method, route, { token: u.token, body });
      assert.equal(asUser.status, 403, `${method} ${route} as user`);
      assert.equal(asUser.json.error.code, 'FORBIDDEN');
      assert.equal(asUser.json.error.details.permission, permission, `${method} ${route}`);
      assert.match(asUser.json.error.message, new RegExp(permission));
      const asNobody = await call(s, method, route, { token: null, body });
      assert.equal(asNobody.status, 401, `${method} ${route} as nobody`);
      assert.equal(asNobody.json.error.code, 'UNAUTHORIZED');
    }
    const logo = await call(s, 'POST', '/api/v1/branding/logo', {
      token: u.token,
      form: await form({ file: new File([Buffer.from('x')], 'l.png') }),
    });
    assert.equal(logo.status, 403);
    assert.equal(logo.json.error.details.permission, 'branding:write');
    // Still a user, still there.
    assert.equal((await call(s, 'GET', '/api/auth/session', { token: u.token })).json.user.role, 'user');
  });

  it('deleting a user removes its sessions, API keys, jobs with their outputs, library files and pipelines', async () => {
    const u = await makeUser(s, 'frank');
    const key = await call(s, 'POST', '/api/v1/api-keys', { token: u.token, body: { name: 'ci' } });
    assert.equal(key.status, 201);
    const jpg = await makeImage(dir, 'frank.jpg', 40, 30);
    const run = await call(s, 'POST', '/api/v1/tools/image/resize', {
      token: key.json.key,
      form: await form({ file: await filePart(jpg), settings: '{"width": 20}' }),
    });
    assert.equal(run.status, 200, JSON.stringify(run.json));
    const job = s.app.kiln.store.db;
    const row = await job.selectFrom('jobs').selectAll().where('id', '=', run.json.jobId).executeTakeFirstOrThrow();
    assert.ok(row.work_dir && existsSync(row.work_dir));

    // Its library file (content unique to it) and a pipeline.
    const unique = await makeImage(dir, 'frank-lib.png', 23, 17);
    const file = await call(s, 'POST', '/api/v1/files', { token: u.token, form: await form({ file: await filePart(unique) }) });
    assert.equal(file.status, 201, JSON.stringify(file.json));
    assert.equal((await call(s, 'GET', `/api/v1/files/${file.json.id}`)).status, 200, 'admins see it before');
    const pipe = await call(s, 'POST', '/api/v1/pipelines', {
      token: u.token,
      body: { name: 'thumbs', steps: [{ tool: 'resize', settings: { width: 10 } }] },
    });
    assert.equal(pipe.status, 201, JSON.stringify(pipe.json));
    const blobs = async () =>
      Number(
        (
          await job
            .selectFrom('library_blobs')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const blobsBefore = await blobs();

    const del = await call(s, 'DELETE', `/api/auth/users/${u.id}`);
    assert.equal(del.status, 200);
    assert.equal(del.json.jobsDeleted, 1);
    assert.equal(del.json.filesDeleted, 1);
    assert.equal(del.json.pipelinesDeleted, 1);
    assert.equal(await job.selectFrom('library_items').select('id').where('owner_id', '=', u.id).executeTakeFirst(), undefined);
    assert.equal(await job.selectFrom('pipelines').select('id').where('owner_id', '=', u.id).executeTakeFirst(), undefined);
    assert.equal(await blobs(), blobsBefore - 1, 'the stored content is released');
    assert.equal(
      (await call(s, 'GET', `/api/v1/files/${file.json.id}`)).status,
      404,
      'not handed to anyone (not even visible to an admin)',
    );
    assert.equal((await call(s, 'GET', '/api/auth/session', { token: u.token })).status, 401);
    assert.equal((await call(s, 'GET', '/api/auth/session', { token: key.json.key })).status, 401);
    assert.equal(await job.selectFrom('jobs').select('id').where('owner_id', '=', u.id).executeTakeFirst(), undefined);
    assert.equal(await job.selectFrom('api_keys').select('id').where('user_id', '=', u.id).executeTakeFirst(), undefined);
    assert.equal(existsSync(row.work_dir!), false);
    assert.equal((await call(s, 'GET', `/api/v1/download/${run.json.jobId}/x`)).status, 404);
    assert.equal((await call(s, 'DELETE', `/api/auth/users/${u.id}`)).status, 404);
  });
});

describe('change-password, sessions and API keys', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(() => s.close());

  it('keeps the calling session, ends the others and revokes every API key', async () => {
    const u = await makeUser(s, 'gina');
    const other = (await call(s, 'POST', '/api/auth/login', { token: null, body: { username: 'gina', password: STRONG } })).json
      .token as string;
    const key = (await call(s, 'POST', '/api/v1/api-keys', { token: u.token, body: { name: 'k' } })).json.key as string;
    assert.equal((await call(s, 'GET', '/api/auth/session', { token: key })).status, 200);

    const wrong = await call(s, 'POST', '/api/auth/change-password', {
      token: u.token,
      body: { currentPassword: 'nope-nope-nope', newPassword: 'Brand-New-Pass-9' },
    });
    assert.equal(wrong.status, 403);
    const weak = await call(s, 'POST', '/api/auth/change-password', {
      token: u.token,
      body: { currentPassword: STRONG, newPassword: 'aaaaaaaaaaaa' },
    });
    assert.equal(weak.status, 400);
    assert.equal((await call(s, 'GET', '/api/auth/session', { token: other })).status, 200, 'failed attempts change nothing');

    const ok = await call(s, 'POST', '/api/auth/change-password', {
      token: u.token,
      body: { currentPassword: STRONG, newPassword: 'Brand-New-Pass-9' },
    });
    assert.equal(ok.status, 200);
    assert.equal((await call(s, 'GET', '/api/auth/session', { token: u.token })).status, 200);
    assert.equal((await call(s, 'GET', '/api/auth/session', { token: other })).status, 401);
    assert.equal((await call(s, 'GET', '/api/auth/session', { token: key })).status, 401);
    assert.equal((await call(s, 'GET', '/api/v1/api-keys', { token: u.token })).json.keys.length, 0);
    assert.equal(
      (await call(s, 'POST', '/api/auth/login', { token: null, body: { username: 'gina', password: 'Brand-New-Pass-9' } })).status,
      200,
    );
  });

  it('an SSO account (no password) is told it has none to change, not that its current one is wrong', async () => {
    const u = await makeUser(s, 'sso-only-pw');
    await s.app.kiln.store.db
      .updateTable('users')
      .set({ password_hash: null, sso_provider: 'oidc', sso_subject: 'pw' })
      .where('id', '=', u.id)
      .execute();
    const r = await call(s, 'POST', '/api/auth/change-password', {
      token: u.token,
      body: { currentPassword: 'anything-at-all', newPassword: 'Another-Horse-43' },
    });
    assert.equal(r.status, 409, JSON.stringify(r.json));
    assert.equal(r.json.error.reason, 'no-password');
  });

  it('tampered session tokens and API keys are refused', async () => {
    const u = await makeUser(s, 'tamper');
    const key = (await call(s, 'POST', '/api/v1/api-keys', { token: u.token, body: { name: 't' } })).json.key as string;
    const flip = (t: string, i: number) => t.slice(0, i) + (t[i] === 'a' ? 'b' : 'a') + t.slice(i + 1);
    for (const bad of [flip(u.token, 5), u.token + 'x', flip(key, 60), flip(key, 5), key.slice(0, -1)]) {
      const r = await call(s, 'GET', '/api/auth/session', { token: bad });
      assert.equal(r.status, 401, bad);
    }
    assert.equal((await call(s, 'GET', '/api/auth/session', { token: key })).status, 200);
  });

  it('API keys: listed without the secret, last-used time, admin sees all with owners, revoke, expiry', async () => {
    const u = await makeUser(s, 'hank');
    const k = await call(s, 'POST', '/api/v1/api-keys', { token: u.token, body: { name: 'laptop', expiresInDays: 30 } });
    assert.equal(k.status, 201);
    assert.match(k.json.key, /^si_[0-9a-f]{96}$/);
    assert.ok(Math.abs(Date.parse(k.json.expiresAt) - Date.now() - 30 * 86_400_000) < 60_000);
    let mine = (await call(s, 'GET', '/api/v1/api-keys', { token: u.token })).json.keys;
    assert.equal(mine.length, 1);
    assert.equal(mine[0].lastUsedAt, null);
    assert.ok(!JSON.stringify(mine).includes(k.json.key.slice(20)), 'the key is never shown again');
    // The key works on other routes with the owner's permissions.
    assert.equal((await call(s, 'GET', '/api/v1/settings', { token: k.json.key })).status, 200);
    assert.equal((await call(s, 'GET', '/api/auth/users', { token: k.json.key })).status, 403);
    mine = (await call(s, 'GET', '/api/v1/api-keys', { token: u.token })).json.keys;
    assert.ok(mine[0].lastUsedAt);

    const all = (await call(s, 'GET', '/api/v1/api-keys?all=true')).json.keys;
    assert.equal(all.find((x: { id: string }) => x.id === k.json.id).owner.username, 'hank');
    // A user cannot widen its view nor revoke someone else's key.
    assert.equal(
      (await call(s, 'GET', '/api/v1/api-keys?all=true', { token: u.token })).json.keys.every((x: { owner?: unknown }) => !x.owner),
      true,
    );
    const adminKey = (await call(s, 'POST', '/api/v1/api-keys', { body: { name: 'admin-key' } })).json;
    assert.equal((await call(s, 'DELETE', `/api/v1/api-keys/${adminKey.id}`, { token: u.token })).status, 404);

    assert.equal((await call(s, 'DELETE', `/api/v1/api-keys/${k.json.id}`, { token: u.token })).status, 200);
    assert.equal((await call(s, 'GET', '/api/auth/session', { token: k.json.key })).status, 401);

    const bad = await call(s, 'POST', '/api/v1/api-keys', { token: u.token, body: { name: 'x', expiresAt: '2001-01-01T00:00:00Z' } });
    assert.equal(bad.status, 400);
    // A misspelt expiry is refused: ignored, it would have made a key that never expires.
    const typo = await call(s, 'POST', '/api/v1/api-keys', { token: u.token, body: { name: 'x', expiresInDay: 1 } });
    assert.equal(typo.status, 400, JSON.stringify(typo.json));
    assert.deepEqual(typo.json.error.details, [{ path: 'expiresInDay', message: 'unknown' }]);
    // A key's name is shown in an admin's `kiln keys list`: no terminal escapes or fake lines, not blank.
    for (const name of ['evil\u001b[2J', 'a\nfake line', '   ']) {
      const r = await call(s, 'POST', '/api/v1/api-keys', { token: u.token, body: { name } });
      assert.equal(r.status, 400, `${JSON.stringify(name)}: ${JSON.stringify(r.json)}`);
      assert.equal(r.json.error.code, 'VALIDATION_ERROR');
    }
    assert.equal((await call(s, 'POST', '/api/v1/api-keys', { token: u.token, body: { name: ' laptop ' } })).json.name, 'laptop');
    const both = await call(s, 'POST', '/api/v1/api-keys', {
      token: u.token,
      body: { name: 'x', expiresAt: new Date(Date.now() + 9e6).toISOString(), expiresInDays: 1 },
    });
    assert.equal(both.status, 400);
    // So short it would round to its creation time: a key dead on arrival is refused, not made.
    for (const expiresInDays of [1e-9, 0]) {
      const dead = await call(s, 'POST', '/api/v1/api-keys', { token: u.token, body: { name: 'dead', expiresInDays } });
      assert.equal(dead.status, 400, `${expiresInDays}: ${JSON.stringify(dead.json)}`);
      assert.equal(dead.json.error.details[0].path, 'expiresInDays');
    }
    const soon = await call(s, 'POST', '/api/v1/api-keys', {
      token: u.token,
      body: { name: 'short', expiresAt: new Date(Date.now() + 1500).toISOString() },
    });
    assert.equal(soon.status, 201);
    assert.equal((await call(s, 'GET', '/api/auth/session', { token: soon.json.key })).status, 200);
    await new Promise((r) => setTimeout(r, 1700));
    const expired = await call(s, 'GET', '/api/auth/session', { token: soon.json.key });
    assert.equal(expired.status, 401);
    assert.equal(expired.json.error.reason, 'api-key-expired');
    assert.equal(
      (await call(s, 'GET', '/api/v1/api-keys', { token: u.token })).json.keys.find((x: { id: string }) => x.id === soon.json.id).expired,
      true,
    );
  });

  it('teams: create, rename, list, assign, delete (members stay without a team)', async () => {
    const u = await makeUser(s, 'ivy');
    const t = (await call(s, 'POST', '/api/v1/teams', { body: { name: 'Ops' } })).json.team;
    assert.equal((await call(s, 'POST', '/api/v1/teams', { body: { name: 'Ops' } })).status, 409);
    assert.equal((await call(s, 'POST', '/api/v1/teams', { body: { name: 'Ops\u001b[31m' } })).status, 400);
    assert.equal((await call(s, 'PUT', `/api/auth/users/${u.id}`, { body: { team: t.id } })).json.user.team.name, 'Ops');
    assert.equal((await call(s, 'GET', '/api/auth/session', { token: u.token })).json.user.teamId, t.id);
    const renamed = await call(s, 'PUT', `/api/v1/teams/${t.id}`, { body: { name: 'Platform' } });
    assert.equal(renamed.json.team.name, 'Platform');
    assert.deepEqual(
      renamed.json.team.members.map((m: { username: string }) => m.username),
      ['ivy'],
    );
    const asUser = (await call(s, 'GET', '/api/v1/teams', { token: u.token })).json.teams;
    assert.deepEqual(
      asUser.map((x: { name: string }) => x.name),
      ['Platform'],
    );
    assert.equal(asUser[0].members, undefined);
    // Another team exists, but a user sees only its own; a user without a team sees none.
    const other = (await call(s, 'POST', '/api/v1/teams', { body: { name: 'Zeta' } })).json.team;
    assert.deepEqual(
      (await call(s, 'GET', '/api/v1/teams', { token: u.token })).json.teams.map((x: { name: string }) => x.name),
      ['Platform'],
    );
    const loner = await makeUser(s, 'ivy-loner');
    assert.deepEqual((await call(s, 'GET', '/api/v1/teams', { token: loner.token })).json.teams, []);
    assert.equal((await call(s, 'GET', '/api/v1/teams')).json.teams.length, 2);
    assert.equal((await call(s, 'DELETE', `/api/v1/teams/${other.id}`)).status, 200);
    assert.equal((await call(s, 'PUT', `/api/auth/users/${u.id}`, { body: { team: 'nope' } })).status, 404);
    assert.equal((await call(s, 'DELETE', `/api/v1/teams/${t.id}`)).status, 200);
    const users = (await call(s, 'GET', '/api/auth/users')).json.users;
    assert.equal(users.find((x: { username: string }) => x.username === 'ivy').team, null);
    assert.equal((await call(s, 'DELETE', `/api/v1/teams/${t.id}`)).status, 404);
  });
});

describe('account limits from the environment', () => {
  it('LOGIN_MAX_FAILURES and API_KEY_CREATE_PER_HOUR below one whole attempt are refused at start (0.5 floored to 0 locked everyone out)', () => {
    assert.equal(resolveAccountsConfig({ LOGIN_MAX_FAILURES: '3.7' }).loginMaxFailures, 3);
    for (const name of ['LOGIN_MAX_FAILURES', 'API_KEY_CREATE_PER_HOUR'])
      for (const bad of ['0.5', '0', '-1'])
        assert.throws(
          () => resolveAccountsConfig({ [name]: bad }),
          (e: KilnError) => e.code === 'USAGE_ERROR' && e.message.includes(name),
          `${name}=${bad}`,
        );
    // A grace past any date made every rotation fail with 500.
    assert.equal(resolveAccountsConfig({ API_KEY_ROTATE_GRACE_S: '0' }).apiKeyRotateGraceS, 0);
    assert.throws(() => resolveAccountsConfig({ API_KEY_ROTATE_GRACE_S: '1e13' }), /API_KEY_ROTATE_GRACE_S/);
  });
});

describe('session lifetime', () => {
  it('SESSION_DURATION_HOURS of 0 or past any date is refused at start, not answered with dead or failed sign-ins', () => {
    const hours = (v: string) => resolveConfig({}, { SESSION_DURATION_HOURS: v }).sessionDurationHours;
    assert.equal(hours('12'), 12);
    assert.equal(hours(String(24 * 3650)), 24 * 3650);
    for (const bad of ['0', '-1', 'abc', '1e12'])
      assert.throws(
        () => hours(bad),
        (e: KilnError) => e.code === 'USAGE_ERROR' && /SESSION_DURATION_HOURS/.test(e.message),
        bad,
      );
  });

  it('an expired session gets 401 (SESSION_DURATION_HOURS)', async () => {
    const s = await startServer({ env: { SESSION_DURATION_HOURS: String(1.5 / 3600) } });
    try {
      assert.equal((await call(s, 'GET', '/api/auth/session')).status, 200);
      await new Promise((r) => setTimeout(r, 1700));
      const r = await call(s, 'GET', '/api/auth/session');
      assert.equal(r.status, 401);
      assert.equal(r.json.error.reason, 'session-expired');
    } finally {
      await s.close();
    }
  });
});

describe('password normalisation (NIST SP 800-63B: NFKC)', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(() => s.close());
  const nfc = 'Caf\u00e9-Horse-42';
  const nfd = 'Cafe\u0301-Horse-42';
  const login = (username: string, password: string) => call(s, 'POST', '/api/auth/login', { token: null, body: { username, password } });

  it('a password set in one Unicode form signs in with the other', async () => {
    assert.notEqual(nfc, nfd);
    assert.equal((await call(s, 'POST', '/api/auth/register', { body: { username: 'zoe', password: nfd } })).status, 201);
    assert.equal((await login('zoe', nfc)).status, 200);
    assert.equal((await login('zoe', nfd)).status, 200);
    const u = await makeUser(s, 'yves', 'user', nfc);
    assert.equal((await login('yves', nfd)).status, 200);
    // The same password in another form is no change.
    const same = await call(s, 'POST', '/api/auth/change-password', { token: u.token, body: { currentPassword: nfd, newPassword: nfc } });
    assert.equal(same.status, 400, JSON.stringify(same.json));
    assert.equal(same.json.error.details[0].message, 'unchanged');
    assert.equal((await login('yves', 'Cafe-Horse-42')).status, 401, 'the accent still counts');
  });

  it('a hash stored before normalisation (as typed) still verifies, and is replaced by the normalised one', async () => {
    const { hashSecret } = await import('../../../daemon/auth/secrets.js');
    await call(s, 'POST', '/api/auth/register', { body: { username: 'olda', password: STRONG } });
    await s.app.kiln.store.db
      .updateTable('users')
      .set({ password_hash: await hashSecret(nfd) })
      .where('username', '=', 'olda')
      .execute();
    assert.equal((await login('olda', nfc)).status, 401, 'the old hash matches only the form it was typed in');
    assert.equal((await login('olda', nfd)).status, 200);
    // That sign-in stored the normalised form's hash: the other form signs in now.
    assert.equal((await login('olda', nfc)).status, 200);
  });

  it('length counts characters (code points), not UTF-16 units', async () => {
    // Six emoji are twelve UTF-16 units but six characters.
    const r = await call(s, 'POST', '/api/auth/register', {
      body: { username: 'emo', password: '\u{1F525}\u{1F4A7}\u{1F33F}\u{1F30D}\u{1F319}\u{1F308}' },
    });
    assert.equal(r.status, 400, JSON.stringify(r.json));
    assert.match(r.json.error.message, /at least 10 characters/);
  });
});
