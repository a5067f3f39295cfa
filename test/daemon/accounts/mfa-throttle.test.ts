/**
 * Guessing the second factor from many addresses. Whoever reaches the TOTP step knows the password, so
 * the account's second factor locks on its own after LOGIN_MAX_FAILURES wrong codes from any addresses
 * (a password guess never counts towards it, so nobody without the password can lock anyone out). Before,
 * only the (account, address) pair and the address locked: a /48 of IPv6, 65,536 /64s, had 650,000
 * guesses per lock period at 3 valid codes in a million.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Secret, TOTP } from 'otpauth';
import { startServer, type TestServer } from '../../helpers/server.js';
import { call, makeUser, STRONG } from './http.js';

function codeAt(secret: string, offsetSteps = 0): string {
  return new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({
    timestamp: Date.now() + offsetSteps * 30_000,
  });
}

describe('second-factor guessing across addresses', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer({ env: { LOGIN_MAX_FAILURES: '3', LOGIN_LOCK_MINUTES: '1', TRUST_PROXY: '127.0.0.1' } });
  });
  after(() => s.close());

  it('locks the account’s second factor after LOGIN_MAX_FAILURES wrong codes from different addresses; passwords alone never lock it', async () => {
    const u = await makeUser(s, 'mfa-target');
    const e = await call(s, 'POST', '/api/auth/mfa/enroll', { token: u.token, body: { password: STRONG } });
    const secret = e.json.secret as string;
    assert.equal((await call(s, 'POST', '/api/auth/mfa/verify', { token: u.token, body: { code: codeAt(secret, -1) } })).status, 200);
    const live = new Set([-1, 0, 1].map((d) => codeAt(secret, d)));
    const wrong = ['000000', '111111', '222222', '333333'].find((c) => !live.has(c))!;
    const from = (n: number) => ({ 'x-forwarded-for': `2001:db8:${n.toString(16)}::1` });
    const challenge = async (n: number) => {
      const l = await call(s, 'POST', '/api/auth/login', {
        token: null,
        body: { username: 'mfa-target', password: STRONG },
        headers: from(n),
      });
      assert.equal(l.status, 200, JSON.stringify(l.json));
      return l.json.mfaToken as string;
    };
    const complete = async (n: number, code: string) =>
      call(s, 'POST', '/api/auth/mfa/complete', { token: null, body: { mfaToken: await challenge(n), code }, headers: from(n) });

    // Wrong passwords from many addresses: slowed, never a lock of the second factor.
    for (let n = 100; n < 104; n++)
      assert.equal(
        (
          await call(s, 'POST', '/api/auth/login', {
            token: null,
            body: { username: 'mfa-target', password: 'Wrong-Horse-99' },
            headers: from(n),
          })
        ).status,
        401,
      );
    // One wrong code per address: each address stays far below its own limit. The third reaches the
    // account's limit and locks (answered 429, as a pair's last failure is).
    for (let n = 1; n <= 2; n++) assert.equal((await complete(n, wrong)).status, 401);
    assert.equal((await complete(3, wrong)).status, 429);
    const fourth = await complete(4, wrong);
    assert.equal(fourth.status, 429, `a fourth guess from a fresh address: ${JSON.stringify(fourth.json)}`);
    assert.ok(Number(fourth.headers.get('retry-after')) > 0);
    // Locked, even the right code is not checked (a guess that happened to be right must not tell).
    const right = await complete(5, codeAt(secret));
    assert.equal(right.status, 429, JSON.stringify(right.json));
    // The password step still answers (a challenge), so the lock says nothing to a password guesser.
    assert.ok(await challenge(6));
  });
});
