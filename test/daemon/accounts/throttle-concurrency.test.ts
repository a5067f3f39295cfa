/**
 * Issue #21 items 1 and 8: the login throttle holds under concurrency (each attempt is reserved before
 * the hash), and every place a secret of the account is checked counts towards it: the TOTP step,
 * change-password's and mfa/disable's current password. API-key creation is rate-limited.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { describe, it } from 'node:test';
import { Secret, TOTP } from 'otpauth';
import { startServer, type TestServer } from '../../helpers/server.js';
import { call, makeUser, STRONG } from './http.js';

async function hashesRun(s: TestServer, target: string): Promise<number> {
  // Every wrong answer that was checked leaves one audit event; attempts refused before the check leave none.
  const events = (await call(s, 'GET', '/api/v1/admin/audit?event=login&limit=500')).json.events as { event: string; target: string }[];
  return events.filter((e) => e.target === target && /^login\.(failure|locked)$/.test(e.event)).length;
}

/**
 * Sends every request at once on one connection (HTTP/1.1 pipelining): the server receives them in this
 * order and handles them concurrently, which is what "100 simultaneous logins, the right one last" means.
 */
async function pipelined(base: string, route: string, bodies: unknown[]): Promise<{ status: number; body: string }[]> {
  const u = new URL(base);
  const raw = bodies
    .map((b) => {
      const json = JSON.stringify(b);
      return `POST ${route} HTTP/1.1\r\nHost: ${u.host}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`;
    })
    .join('');
  const sock = connect(Number(u.port), u.hostname);
  let data = '';
  await new Promise<void>((resolve, reject) => {
    sock.on('error', reject);
    sock.on('data', (d) => {
      data += d;
      if ((data.match(/HTTP\/1\.1 \d{3}/g) ?? []).length >= bodies.length) resolve();
    });
    sock.write(raw);
  });
  sock.destroy();
  // Answers come back in request order; the JSON bodies never contain "HTTP/1.1 ".
  return data.split(/(?=HTTP\/1\.1 \d{3})/).map((r) => ({ status: Number(r.slice(9, 12)), body: r.slice(r.indexOf('\r\n\r\n') + 4) }));
}

const login = (s: TestServer, username: string, password: string) =>
  call(s, 'POST', '/api/auth/login', { token: null, body: { username, password } });

describe('throttle under concurrency', () => {
  it('100 simultaneous logins, 99 wrong and the right one last: no token, and only the limit of hashes run', async () => {
    const s = await startServer();
    try {
      await makeUser(s, 'victim');
      const bodies = [...Array.from({ length: 99 }, (_, i) => ({ username: 'victim', password: `wrong-password-${i}` }))];
      bodies.push({ username: 'victim', password: STRONG });
      const answers = await pipelined(s.url, '/api/auth/login', bodies);
      const right = answers[99]!;
      assert.equal(right.status, 429, `the right password after the lock: ${right.status} ${right.body}`);
      assert.doesNotMatch(right.body, /token/);
      assert.ok(
        answers.every((a) => a.status === 401 || a.status === 429),
        `only 401 and 429: ${answers.map((a) => a.status)}`,
      );
      // LOGIN_MAX_FAILURES defaults to 10: at most that many attempts were reserved and checked (before: all 99).
      const checked = await hashesRun(s, 'victim');
      assert.ok(checked <= 10, `${checked} attempts were checked`);
    } finally {
      await s.close();
    }
  });

  it('TOTP failures count towards the lock: a right password does not clear the count before the second factor', async () => {
    const s = await startServer({ env: { LOGIN_MAX_FAILURES: '4' } });
    try {
      const u = await makeUser(s, 'totp-user');
      const e = await call(s, 'POST', '/api/auth/mfa/enroll', { token: u.token, body: { password: STRONG } });
      const totp = new TOTP({ secret: Secret.fromBase32(e.json.secret), digits: 6, period: 30, algorithm: 'SHA1' });
      const code = (steps: number) => totp.generate({ timestamp: Date.now() + steps * 30_000 });
      assert.equal((await call(s, 'POST', '/api/auth/mfa/verify', { token: u.token, body: { code: code(-1) } })).status, 200);
      const wrongCode = (c: string) => String((Number(c) + 500_000) % 1_000_000).padStart(6, '0');
      // Right password, wrong code, again and again: before, each right password reset the count.
      let last = 0;
      for (let i = 0; i < 4; i++) {
        const l = await login(s, 'totp-user', STRONG);
        if (l.status !== 200) {
          last = l.status;
          break;
        }
        const c = await call(s, 'POST', '/api/auth/mfa/complete', {
          token: null,
          body: { mfaToken: l.json.mfaToken, code: wrongCode(code(0)) },
        });
        last = c.status;
        if (c.status === 429) break;
        assert.equal(c.status, 401);
      }
      assert.equal(last, 429, 'locked after LOGIN_MAX_FAILURES wrong codes');
      const after = await login(s, 'totp-user', STRONG);
      assert.equal(after.status, 429, 'the right password is refused while locked');

      // mfa/disable: the right password with a wrong code, again and again, locks too.
      const v = await makeUser(s, 'totp-disabler');
      const e2 = await call(s, 'POST', '/api/auth/mfa/enroll', { token: v.token, body: { password: STRONG } });
      const totp2 = new TOTP({ secret: Secret.fromBase32(e2.json.secret), digits: 6, period: 30, algorithm: 'SHA1' });
      const code2 = (steps: number) => totp2.generate({ timestamp: Date.now() + steps * 30_000 });
      assert.equal((await call(s, 'POST', '/api/auth/mfa/verify', { token: v.token, body: { code: code2(-1) } })).status, 200);
      const disable = () =>
        call(s, 'POST', '/api/auth/mfa/disable', { token: v.token, body: { password: STRONG, code: wrongCode(code2(0)) } });
      const answers: number[] = [];
      for (let i = 0; i < 4; i++) answers.push((await disable()).status);
      assert.deepEqual(answers, [403, 403, 403, 429]);
      assert.equal((await call(s, 'GET', '/api/auth/mfa', { token: v.token })).json.enabled, true);
    } finally {
      await s.close();
    }
  });

  it('change-password and mfa/disable: wrong current passwords lock like logins (429 then, even for the right one)', async () => {
    const s = await startServer({ env: { LOGIN_MAX_FAILURES: '3' } });
    try {
      const u = await makeUser(s, 'changer');
      const change = (current: string) =>
        call(s, 'POST', '/api/auth/change-password', {
          token: u.token,
          body: { currentPassword: current, newPassword: 'Another-Pass-77' },
        });
      assert.equal((await change('nope-1-xxxxx')).status, 403);
      assert.equal((await change('nope-2-xxxxx')).status, 403);
      const third = await change('nope-3-xxxxx');
      assert.equal(third.status, 429);
      assert.ok(Number(third.headers.get('retry-after')) >= 1);
      const right = await change(STRONG);
      assert.equal(right.status, 429, 'the right current password is refused while locked');
      // The same counters: mfa/disable's password check is refused too.
      const d = await call(s, 'POST', '/api/auth/mfa/enroll', { token: u.token, body: { password: STRONG } });
      assert.equal(d.status, 429);

      const v = await makeUser(s, 'changer2');
      for (let i = 0; i < 2; i++)
        assert.equal(
          (await call(s, 'POST', '/api/auth/mfa/enroll', { token: v.token, body: { password: `bad-${i}-xxxxxxx` } })).status,
          403,
        );
      assert.equal((await call(s, 'POST', '/api/auth/mfa/enroll', { token: v.token, body: { password: 'bad-3-xxxxxx' } })).status, 429);
    } finally {
      await s.close();
    }
  });

  it('API-key creation is rate-limited per account (API_KEY_CREATE_PER_HOUR)', async () => {
    const s = await startServer({ env: { API_KEY_CREATE_PER_HOUR: '3' } });
    try {
      const u = await makeUser(s, 'minter');
      for (let i = 0; i < 3; i++)
        assert.equal((await call(s, 'POST', '/api/v1/api-keys', { token: u.token, body: { name: `k${i}` } })).status, 201);
      const r = await call(s, 'POST', '/api/v1/api-keys', { token: u.token, body: { name: 'k3' } });
      assert.equal(r.status, 429);
      assert.equal(r.json.error.code, 'RATE_LIMITED');
      assert.ok(Number(r.headers.get('retry-after')) > 3000, 'until the hour is over');
      // Another account is not affected.
      assert.equal((await call(s, 'POST', '/api/v1/api-keys', { body: { name: 'admin-key' } })).status, 201);
    } finally {
      await s.close();
    }
  });
});
