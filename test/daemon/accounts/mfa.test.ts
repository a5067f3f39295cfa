/**
 * Every transition of the spec's "Session and MFA login" and "MFA enrollment" tables, with real TOTP
 * codes computed here by otpauth from the secret the server hands out.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Secret, TOTP, URI } from 'otpauth';
import { startServer, type TestServer } from '../../helpers/server.js';
import { call, makeUser, STRONG } from './http.js';

function codeAt(secret: string, offsetSteps = 0): string {
  return new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({
    timestamp: Date.now() + offsetSteps * 30_000,
  });
}

async function enable(s: TestServer, token: string): Promise<{ secret: string; recoveryCodes: string[] }> {
  const e = await call(s, 'POST', '/api/auth/mfa/enroll', { token, body: { password: STRONG } });
  assert.equal(e.status, 200, JSON.stringify(e.json));
  // The previous step: leaves the current and next steps unused for the login that follows.
  const v = await call(s, 'POST', '/api/auth/mfa/verify', { token, body: { code: codeAt(e.json.secret, -1) } });
  assert.equal(v.status, 200, JSON.stringify(v.json));
  return { secret: e.json.secret, recoveryCodes: v.json.recoveryCodes };
}

describe('TOTP MFA', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer({ env: { LOGIN_MAX_FAILURES: '50' } });
  });
  after(() => s.close());

  it('enrollment: enroll gives secret, otpauth URI and QR code; verify enables with a valid code only', async () => {
    const u = await makeUser(s, 'mfa-a');
    const st0 = await call(s, 'GET', '/api/auth/mfa', { token: u.token });
    assert.deepEqual(st0.json, { enabled: false, enrollmentPending: false, recoveryCodesLeft: 0 });
    const e = await call(s, 'POST', '/api/auth/mfa/enroll', { token: u.token, body: { password: STRONG } });
    assert.equal(e.status, 200);
    assert.match(e.json.secret, /^[A-Z2-7]{32}$/);
    const uri = new URL(e.json.otpauthUri);
    assert.equal(uri.protocol, 'otpauth:');
    assert.equal(uri.searchParams.get('secret'), e.json.secret);
    assert.match(decodeURIComponent(uri.pathname), /mfa-a/);
    assert.match(e.json.qrCode, /^data:image\/png;base64,/);
    const png = Buffer.from(e.json.qrCode.split(',')[1], 'base64');
    assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    assert.equal((await call(s, 'GET', '/api/auth/mfa', { token: u.token })).json.enrollmentPending, true);

    // Enrollment started but not verified: login still gives a token directly.
    assert.ok((await call(s, 'POST', '/api/auth/login', { token: null, body: { username: 'mfa-a', password: STRONG } })).json.token);

    const wrongCode = String((Number(codeAt(e.json.secret)) + 1) % 1_000_000).padStart(6, '0');
    const bad = await call(s, 'POST', '/api/auth/mfa/verify', { token: u.token, body: { code: wrongCode } });
    // The session is fine, the code is not: 403 (a 401 reads as "signed out" to clients).
    assert.equal(bad.status, 403, JSON.stringify(bad.json));
    assert.equal(bad.json.error.reason, 'mfa-code-invalid');
    assert.equal((await call(s, 'GET', '/api/auth/session', { token: u.token })).status, 200);
    assert.equal((await call(s, 'GET', '/api/auth/mfa', { token: u.token })).json.enabled, false);

    const v = await call(s, 'POST', '/api/auth/mfa/verify', { token: u.token, body: { code: codeAt(e.json.secret) } });
    assert.equal(v.status, 200);
    assert.equal(v.json.enabled, true);
    assert.equal(v.json.recoveryCodes.length, 10);
    assert.equal(new Set(v.json.recoveryCodes).size, 10);
    // Stored hashed: no recovery code appears in the database.
    const rows = await s.app.kiln.store.db.selectFrom('mfa_recovery_codes').select('code_hash').where('user_id', '=', u.id).execute();
    assert.equal(rows.length, 10);
    for (const c of v.json.recoveryCodes)
      assert.ok(!rows.some((r) => r.code_hash.includes(c) || r.code_hash.includes(c.replace(/-/g, ''))));
    assert.equal((await call(s, 'POST', '/api/auth/mfa/enroll', { token: u.token, body: { password: STRONG } })).status, 409);
    assert.equal((await call(s, 'GET', '/api/auth/mfa', { token: u.token })).json.recoveryCodesLeft, 10);
  });

  it('login: challenge instead of a token, completed by a TOTP code; the mfaToken is single-use and codes are not replayable', async () => {
    const u = await makeUser(s, 'mfa-b');
    const { secret } = await enable(s, u.token);
    const l = await call(s, 'POST', '/api/auth/login', { token: null, body: { username: 'mfa-b', password: STRONG } });
    assert.equal(l.status, 200);
    assert.equal(l.json.requiresMfa, true);
    assert.match(l.json.mfaToken, /^mfa_/);
    assert.equal(l.json.token, undefined);
    // The challenge token is no credential.
    assert.equal((await call(s, 'GET', '/api/auth/session', { token: l.json.mfaToken })).status, 401);

    const wrong = await call(s, 'POST', '/api/auth/mfa/complete', {
      token: null,
      body: { mfaToken: l.json.mfaToken, code: '000000' === codeAt(secret) ? '111111' : '000000' },
    });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.json.token, undefined);
    const neither = await call(s, 'POST', '/api/auth/mfa/complete', { token: null, body: { mfaToken: l.json.mfaToken } });
    assert.equal(neither.status, 400);

    const code = codeAt(secret);
    const ok = await call(s, 'POST', '/api/auth/mfa/complete', { token: null, body: { mfaToken: l.json.mfaToken, code } });
    assert.equal(ok.status, 200, JSON.stringify(ok.json));
    assert.ok(ok.json.token);
    assert.equal((await call(s, 'GET', '/api/auth/session', { token: ok.json.token })).json.user.username, 'mfa-b');
    const again = await call(s, 'POST', '/api/auth/mfa/complete', {
      token: null,
      body: { mfaToken: l.json.mfaToken, code: codeAt(secret, 1) },
    });
    assert.equal(again.status, 401, 'mfaToken is single-use');

    const l2 = await call(s, 'POST', '/api/auth/login', { token: null, body: { username: 'mfa-b', password: STRONG } });
    const replay = await call(s, 'POST', '/api/auth/mfa/complete', { token: null, body: { mfaToken: l2.json.mfaToken, code } });
    assert.equal(replay.status, 401, 'a used code is refused');
    // Written as authenticator apps show it ("123 456"), as it is copied from them.
    const spaced = codeAt(secret, 1).replace(/^(\d{3})/, '$1 ');
    const next = await call(s, 'POST', '/api/auth/mfa/complete', {
      token: null,
      body: { mfaToken: l2.json.mfaToken, code: spaced },
    });
    assert.equal(next.status, 200);

    // An API key has no session to end: told so, not "ok" while it stays valid.
    const key = await call(s, 'POST', '/api/v1/api-keys', { token: next.json.token, body: { name: 'k' } });
    const keyLogout = await call(s, 'POST', '/api/auth/logout', { token: key.json.key });
    assert.equal(keyLogout.status, 409, JSON.stringify(keyLogout.json));
    assert.equal(keyLogout.json.error.reason, 'api-key-no-session');
    // Logout destroys the session.
    assert.equal((await call(s, 'POST', '/api/auth/logout', { token: next.json.token })).status, 200);
    assert.equal((await call(s, 'GET', '/api/auth/session', { token: next.json.token })).status, 401);
  });

  it('recovery codes work once each; an expired or exhausted mfaToken is refused', async () => {
    const u = await makeUser(s, 'mfa-c');
    const { secret, recoveryCodes } = await enable(s, u.token);
    const l = await call(s, 'POST', '/api/auth/login', { token: null, body: { username: 'mfa-c', password: STRONG } });
    const r1 = await call(s, 'POST', '/api/auth/mfa/complete', {
      token: null,
      body: { mfaToken: l.json.mfaToken, recoveryCode: recoveryCodes[0].toLowerCase() },
    });
    assert.equal(r1.status, 200);
    assert.ok(r1.json.token);
    const l2 = await call(s, 'POST', '/api/auth/login', { token: null, body: { username: 'mfa-c', password: STRONG } });
    assert.equal(
      (
        await call(s, 'POST', '/api/auth/mfa/complete', {
          token: null,
          body: { mfaToken: l2.json.mfaToken, recoveryCode: recoveryCodes[0] },
        })
      ).status,
      401,
    );
    assert.equal(
      (
        await call(s, 'POST', '/api/auth/mfa/complete', {
          token: null,
          body: { mfaToken: l2.json.mfaToken, recoveryCode: recoveryCodes[1] },
        })
      ).status,
      200,
    );
    assert.equal((await call(s, 'GET', '/api/auth/mfa', { token: u.token })).json.recoveryCodesLeft, 8);

    // Expired: move the challenge's expiry into the past (5 minutes is too long to wait in a test).
    const l3 = await call(s, 'POST', '/api/auth/login', { token: null, body: { username: 'mfa-c', password: STRONG } });
    await s.app.kiln.store.db
      .updateTable('mfa_challenges')
      .set({ expires_at: Date.now() - 1 })
      .where('user_id', '=', u.id)
      .execute();
    const late = await call(s, 'POST', '/api/auth/mfa/complete', {
      token: null,
      body: { mfaToken: l3.json.mfaToken, code: codeAt(secret) },
    });
    assert.equal(late.status, 401);
    assert.equal(late.json.error.reason, 'mfa-token-invalid');

    // Five wrong guesses burn the challenge: even the right code is then refused.
    const l4 = await call(s, 'POST', '/api/auth/login', { token: null, body: { username: 'mfa-c', password: STRONG } });
    for (let i = 0; i < 5; i++)
      await call(s, 'POST', '/api/auth/mfa/complete', {
        token: null,
        body: { mfaToken: l4.json.mfaToken, recoveryCode: 'AAAA-BBBB-CCCC-DDD' + i },
      });
    assert.equal(
      (await call(s, 'POST', '/api/auth/mfa/complete', { token: null, body: { mfaToken: l4.json.mfaToken, code: codeAt(secret) } })).status,
      401,
    );
    assert.equal(
      (await call(s, 'POST', '/api/auth/mfa/complete', { token: null, body: { mfaToken: 'mfa_forged', code: codeAt(secret) } })).status,
      401,
    );
  });

  it('disable: needs the password and a right code or recovery code; afterwards login gives a token again', async () => {
    const u = await makeUser(s, 'mfa-d');
    const { secret } = await enable(s, u.token);
    assert.equal((await call(s, 'POST', '/api/auth/mfa/disable', { token: u.token, body: {} })).status, 400);
    assert.equal(
      (await call(s, 'POST', '/api/auth/mfa/disable', { token: u.token, body: { password: 'wrong-password-1', code: codeAt(secret) } }))
        .status,
      403,
    );
    assert.equal(
      (await call(s, 'POST', '/api/auth/mfa/disable', { token: u.token, body: { password: STRONG, code: '000000' } })).status,
      403,
    );
    const byCode = await call(s, 'POST', '/api/auth/mfa/disable', { token: u.token, body: { password: STRONG, code: codeAt(secret) } });
    assert.equal(byCode.status, 200);
    assert.equal(byCode.json.enabled, false);
    const l = await call(s, 'POST', '/api/auth/login', { token: null, body: { username: 'mfa-d', password: STRONG } });
    assert.ok(l.json.token);
    assert.equal(l.json.requiresMfa, undefined);
    assert.equal((await call(s, 'POST', '/api/auth/mfa/disable', { token: u.token, body: { password: STRONG } })).status, 409);

    const again = await enable(s, u.token);
    // The password alone (a stolen session plus a phished password) does not remove the second factor.
    const pwOnly = await call(s, 'POST', '/api/auth/mfa/disable', { token: u.token, body: { password: STRONG } });
    assert.equal(pwOnly.status, 400, JSON.stringify(pwOnly.json));
    assert.equal((await call(s, 'GET', '/api/auth/mfa', { token: u.token })).json.enabled, true);
    const wrongRecovery = await call(s, 'POST', '/api/auth/mfa/disable', {
      token: u.token,
      body: { password: STRONG, recoveryCode: 'AAAA-AAAA-AAAA-AAAA' },
    });
    assert.equal(wrongRecovery.status, 403);
    assert.equal((await call(s, 'GET', '/api/auth/mfa', { token: u.token })).json.enabled, true);
    const byRecovery = await call(s, 'POST', '/api/auth/mfa/disable', {
      token: u.token,
      body: { password: STRONG, recoveryCode: again.recoveryCodes[0] },
    });
    assert.equal(byRecovery.status, 200, JSON.stringify(byRecovery.json));
    assert.equal((await call(s, 'GET', '/api/auth/mfa', { token: u.token })).json.enabled, false);
    // A pending enrollment (nothing enabled) is cancelled with the password alone.
    assert.equal((await call(s, 'POST', '/api/auth/mfa/enroll', { token: u.token, body: { password: STRONG } })).status, 200);
    assert.equal((await call(s, 'POST', '/api/auth/mfa/disable', { token: u.token, body: { password: STRONG } })).status, 200);
    assert.equal((await call(s, 'GET', '/api/auth/mfa', { token: u.token })).json.enrollmentPending, false);
  });

  it('an account without a password (SSO) switches MFA off only with a current code, not by its session alone', async () => {
    const u = await makeUser(s, 'mfa-sso-only');
    const { secret } = await enable(s, u.token);
    await s.app.kiln.store.db
      .updateTable('users')
      .set({ password_hash: null, sso_provider: 'oidc', sso_subject: 'x' })
      .where('id', '=', u.id)
      .execute();
    const bare = await call(s, 'POST', '/api/auth/mfa/disable', { token: u.token, body: {} });
    assert.equal(bare.status, 400, JSON.stringify(bare.json));
    assert.equal((await call(s, 'GET', '/api/auth/mfa', { token: u.token })).json.enabled, true);
    const withCode = await call(s, 'POST', '/api/auth/mfa/disable', { token: u.token, body: { code: codeAt(secret) } });
    assert.equal(withCode.status, 200, JSON.stringify(withCode.json));
    assert.equal((await call(s, 'GET', '/api/auth/mfa', { token: u.token })).json.enabled, false);
  });

  it('an account without a password (SSO) enrols only from a recent sign-in, not an old session', async () => {
    const u = await makeUser(s, 'mfa-sso-enrol');
    await s.app.kiln.store.db
      .updateTable('users')
      .set({ password_hash: null, sso_provider: 'oidc', sso_subject: 'y' })
      .where('id', '=', u.id)
      .execute();
    // The session was made an hour ago (a stolen cookie, a laptop left signed in).
    await s.app.kiln.store.db
      .updateTable('sessions')
      .set({ created_at: Date.now() - 3_600_000 })
      .where('user_id', '=', u.id)
      .execute();
    const old = await call(s, 'POST', '/api/auth/mfa/enroll', { token: u.token, body: {} });
    assert.equal(old.status, 403, JSON.stringify(old.json));
    assert.equal(old.json.error.reason, 'reauthentication-required');
    assert.equal((await call(s, 'GET', '/api/auth/mfa', { token: u.token })).json.enrollmentPending, false);
    await s.app.kiln.store.db.updateTable('sessions').set({ created_at: Date.now() }).where('user_id', '=', u.id).execute();
    const fresh = await call(s, 'POST', '/api/auth/mfa/enroll', { token: u.token, body: {} });
    assert.equal(fresh.status, 200, JSON.stringify(fresh.json));
  });

  it('admin reset: MFA off for that user, audited', async () => {
    const u = await makeUser(s, 'mfa-e');
    await enable(s, u.token);
    assert.equal(
      (await call(s, 'POST', '/api/auth/login', { token: null, body: { username: 'mfa-e', password: STRONG } })).json.requiresMfa,
      true,
    );
    const r = await call(s, 'POST', `/api/auth/users/${u.id}/mfa/reset`);
    assert.equal(r.status, 200);
    assert.ok((await call(s, 'POST', '/api/auth/login', { token: null, body: { username: 'mfa-e', password: STRONG } })).json.token);
    assert.equal(
      (await call(s, 'GET', '/api/auth/users')).json.users.find((x: { username: string }) => x.username === 'mfa-e').mfaEnabled,
      false,
    );
    const events = (await call(s, 'GET', '/api/v1/admin/audit?event=mfa')).json.events.map(
      (e: { event: string; target: string }) => `${e.event} ${e.target}`,
    );
    assert.ok(events.includes('mfa.reset mfa-e'));
    assert.ok(events.includes('mfa.enable mfa-e'));
    assert.equal((await call(s, 'POST', '/api/auth/users/nobody/mfa/reset')).status, 404);
  });

  it('an account disabled between the password and the code gets no session from its pending challenge', async () => {
    const u = await makeUser(s, 'mfa-disabled');
    const { secret } = await enable(s, u.token);
    const l = await call(s, 'POST', '/api/auth/login', { token: null, body: { username: 'mfa-disabled', password: STRONG } });
    assert.equal(l.json.requiresMfa, true);
    assert.equal((await call(s, 'PUT', `/api/auth/users/${u.id}`, { body: { disabled: true } })).status, 200);
    const c = await call(s, 'POST', '/api/auth/mfa/complete', { token: null, body: { mfaToken: l.json.mfaToken, code: codeAt(secret) } });
    assert.equal(c.status, 401, JSON.stringify(c.json));
    assert.equal(c.json.token, undefined);
    // Newest first: nothing after the challenge claims a sign-in.
    const events = (await call(s, 'GET', '/api/v1/admin/audit?event=login')).json.events
      .filter((e: { target: string }) => e.target === 'mfa-disabled')
      .map((e: { event: string }) => e.event);
    assert.equal(events[0], 'login.mfa-challenge', events.join(', '));
    assert.equal(await s.app.kiln.store.db.selectFrom('sessions').select('id').where('user_id', '=', u.id).executeTakeFirst(), undefined);
  });

  it('a product name with a colon still gives an otpauth URI whose account is the username', async () => {
    assert.equal((await call(s, 'PUT', '/api/v1/branding', { body: { productName: 'Acme: Media' } })).status, 200);
    try {
      const u = await makeUser(s, 'mfa-colon');
      const e = await call(s, 'POST', '/api/auth/mfa/enroll', { token: u.token, body: { password: STRONG } });
      assert.equal(e.status, 200, JSON.stringify(e.json));
      const parsed = URI.parse(e.json.otpauthUri);
      assert.equal(parsed.label, 'mfa-colon');
      assert.equal(parsed.issuer, 'Acme Media');
    } finally {
      await call(s, 'PUT', '/api/v1/branding', { body: { productName: 'kiln' } });
    }
  });

  it('the mfa feature switched off: enroll answers 403 FEATURE_DISABLED', async () => {
    const u = await makeUser(s, 'mfa-f');
    assert.equal((await call(s, 'GET', '/api/v1/settings', { token: u.token })).json.settings.features.mfa, true);
    assert.equal((await call(s, 'PUT', '/api/v1/settings', { body: { features: { mfa: false } } })).status, 200);
    try {
      const r = await call(s, 'POST', '/api/auth/mfa/enroll', { token: u.token, body: { password: STRONG } });
      assert.equal(r.status, 403);
      assert.equal(r.json.error.code, 'FEATURE_DISABLED');
    } finally {
      assert.equal((await call(s, 'PUT', '/api/v1/settings', { body: { features: { mfa: true } } })).status, 200);
    }
    assert.equal((await call(s, 'POST', '/api/auth/mfa/enroll', { token: u.token, body: { password: STRONG } })).status, 200);
  });

  it('a stolen API key or a session without the password cannot enrol, confirm or remove the second factor', async () => {
    const u = await makeUser(s, 'mfa-g');
    const key = (await call(s, 'POST', '/api/v1/api-keys', { token: u.token, body: { name: 'stolen' } })).json.key as string;
    for (const route of ['/api/auth/mfa/enroll', '/api/auth/mfa/verify', '/api/auth/mfa/disable']) {
      const r = await call(s, 'POST', route, { token: key, body: { password: STRONG, code: '123456' } });
      assert.equal(r.status, 403, route);
      assert.equal(r.json.error.reason, 'api-key-not-allowed', route);
    }
    const pw = await call(s, 'POST', '/api/auth/change-password', {
      token: key,
      body: { currentPassword: STRONG, newPassword: 'Another-Horse-43' },
    });
    assert.equal(pw.status, 403);
    assert.equal(pw.json.error.reason, 'api-key-not-allowed');
    // A session alone (no password) is not enough either.
    assert.equal((await call(s, 'POST', '/api/auth/mfa/enroll', { token: u.token })).status, 400);
    const wrong = await call(s, 'POST', '/api/auth/mfa/enroll', { token: u.token, body: { password: 'Not-The-Password-1' } });
    assert.equal(wrong.status, 403);
    assert.equal(wrong.json.error.reason, 'wrong-password');
    assert.equal((await call(s, 'GET', '/api/auth/mfa', { token: u.token })).json.enrollmentPending, false);
    const { secret } = await enable(s, u.token);
    // Removing it needs the password too; a code alone is refused.
    assert.equal((await call(s, 'POST', '/api/auth/mfa/disable', { token: u.token, body: { code: codeAt(secret) } })).status, 400);
    assert.equal((await call(s, 'GET', '/api/auth/mfa', { token: u.token })).json.enabled, true);
  });
});
