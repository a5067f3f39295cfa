/** Login protection: slow-down, lock with 429 + Retry-After per (username, address) pair and per address, no user enumeration. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startServer } from '../../helpers/server.js';
import { call, makeUser, STRONG } from './http.js';

async function timed<T>(f: () => Promise<T>): Promise<[T, number]> {
  const t = performance.now();
  const r = await f();
  return [r, performance.now() - t];
}

describe('login protection', () => {
  it('slows repeated failures, then locks the username (429, Retry-After) even for the right password, then lets it in after the lock', async () => {
    const s = await startServer({ env: { LOGIN_MAX_FAILURES: '6', LOGIN_LOCK_MINUTES: String(2.5 / 60) } });
    try {
      await makeUser(s, 'victim');
      const times: number[] = [];
      for (let i = 0; i < 5; i++) {
        const [r, ms] = await timed(() =>
          call(s, 'POST', '/api/auth/login', { token: null, body: { username: 'victim', password: `wrong-${i}` } }),
        );
        assert.equal(r.status, 401);
        assert.equal(r.json.error.message, 'Wrong username or password.');
        times.push(ms);
      }
      // Failures past half the limit wait 250 ms per step: the fifth waits 500 ms.
      assert.ok(times[4]! - Math.min(...times.slice(0, 3)) >= 350, `fifth failure slowed (${times.map(Math.round)})`);
      const [fourth] = await timed(() =>
        call(s, 'POST', '/api/auth/login', { token: null, body: { username: 'victim', password: 'wrong-5' } }),
      );
      assert.equal(fourth.status, 429);
      assert.equal(fourth.json.error.code, 'RATE_LIMITED');
      const retry = Number(fourth.headers.get('retry-after'));
      assert.ok(retry >= 1 && retry <= 3, `Retry-After ${retry}`);
      const right = await call(s, 'POST', '/api/auth/login', { token: null, body: { username: 'victim', password: STRONG } });
      assert.equal(right.status, 429, 'locked even with the right password');
      assert.ok(Number(right.headers.get('retry-after')) >= 1);
      // Other users are not affected by this username's lock.
      assert.equal(
        (await call(s, 'POST', '/api/auth/login', { token: null, body: { username: 'admin', password: s.adminPassword } })).status,
        200,
      );
      // An unknown username locks the same way (a lock reveals nothing about who exists).
      for (let i = 0; i < 5; i++)
        assert.equal((await call(s, 'POST', '/api/auth/login', { token: null, body: { username: 'ghost', password: 'x' } })).status, 401);
      assert.equal((await call(s, 'POST', '/api/auth/login', { token: null, body: { username: 'ghost', password: 'x' } })).status, 429);

      await new Promise((r) => setTimeout(r, retry * 1000 + 200));
      const after = await call(s, 'POST', '/api/auth/login', { token: null, body: { username: 'victim', password: STRONG } });
      assert.equal(after.status, 200);
      const audit = (await call(s, 'GET', '/api/v1/admin/audit?event=login')).json.events.map(
        (e: { event: string; target: string }) => `${e.event} ${e.target}`,
      );
      assert.ok(audit.includes('login.locked victim'));
      assert.ok(audit.includes('login.failure ghost'));
      assert.ok(audit.includes('login.success victim'));
    } finally {
      await s.close();
    }
  });

  it("an address guessing the admin's password locks only itself out, for longer each time; the admin signs in from another address", async () => {
    // Behind a reverse proxy on this host: X-Forwarded-For names the client.
    const s = await startServer({ env: { LOGIN_MAX_FAILURES: '4', LOGIN_LOCK_MINUTES: String(1.5 / 60), TRUST_PROXY: '127.0.0.1' } });
    try {
      const from = (ip: string, password: string) =>
        call(s, 'POST', '/api/auth/login', { token: null, body: { username: 'admin', password }, headers: { 'x-forwarded-for': ip } });
      const attacker = '203.0.113.9';
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await from(attacker, `guess-${i}`)).status);
      assert.deepEqual(statuses, [401, 401, 401, 429]);
      const locked = await from(attacker, s.adminPassword);
      assert.equal(locked.status, 429, 'the attacker address is locked even with the right password');
      const first = Number(locked.headers.get('retry-after'));
      assert.ok(first >= 1 && first <= 2, `Retry-After ${first}`);
      // The admin, elsewhere, is not locked out.
      const admin = await from('198.51.100.7', s.adminPassword);
      assert.equal(admin.status, 200, JSON.stringify(admin.json));
      assert.ok(admin.json.token);

      // After the lock, one more wrong guess from that address locks it again, twice as long, then four times
      // (Retry-After is counted from the answer, which the slow-down of the username holds back a little).
      await new Promise((r) => setTimeout(r, first * 1000 + 200));
      const again = await from(attacker, 'guess-again');
      assert.equal(again.status, 429);
      const second = Number(again.headers.get('retry-after'));
      assert.ok(second >= 2 && second > first, `second lock ${second} s after ${first} s`);
      await new Promise((r) => setTimeout(r, second * 1000 + 200));
      const third = Number((await from(attacker, 'guess-3rd')).headers.get('retry-after'));
      assert.ok(third >= 4 && third > second, `third lock ${third} s after ${second} s`);
      assert.equal((await from('198.51.100.7', s.adminPassword)).status, 200);
    } finally {
      await s.close();
    }
  });

  it('without TRUST_PROXY a forged X-Forwarded-For does not escape the lock', async () => {
    const s = await startServer({ env: { LOGIN_MAX_FAILURES: '3', LOGIN_LOCK_MINUTES: '1' } });
    try {
      let last = 0;
      for (let i = 0; i < 3; i++)
        last = (
          await call(s, 'POST', '/api/auth/login', {
            token: null,
            body: { username: 'admin', password: `guess-${i}` },
            headers: { 'x-forwarded-for': `203.0.113.${i}` },
          })
        ).status;
      assert.equal(last, 429);
      const r = await call(s, 'POST', '/api/auth/login', {
        token: null,
        body: { username: 'admin', password: s.adminPassword },
        headers: { 'x-forwarded-for': '198.51.100.99' },
      });
      assert.equal(r.status, 429);
      assert.ok(Number(r.headers.get('retry-after')) > 50);
    } finally {
      await s.close();
    }
  });

  it('counts an IPv6 client by its /64: new addresses in it do not escape the lock, another /64 is not locked', async () => {
    const s = await startServer({ env: { LOGIN_MAX_FAILURES: '3', LOGIN_LOCK_MINUTES: '1', TRUST_PROXY: '127.0.0.1' } });
    try {
      const from = (ip: string, password: string) =>
        call(s, 'POST', '/api/auth/login', { token: null, body: { username: 'admin', password }, headers: { 'x-forwarded-for': ip } });
      const statuses: number[] = [];
      // One host of 2001:db8:77:1::/64 takes a fresh address for every guess.
      for (let i = 1; i <= 3; i++) statuses.push((await from(`2001:db8:77:1:${i.toString(16)}::${i}`, `guess-${i}`)).status);
      assert.deepEqual(statuses, [401, 401, 429]);
      assert.equal((await from('2001:db8:77:1:ffff::abcd', s.adminPassword)).status, 429, 'a new address of the same /64');
      const elsewhere = await from('2001:db8:77:2::1', s.adminPassword);
      assert.equal(elsewhere.status, 200, JSON.stringify(elsewhere.json));
      // The audit keeps the address itself.
      const audit = await call(s, 'GET', '/api/v1/admin/audit?event=login.failure', { token: elsewhere.json.token });
      assert.equal(audit.status, 200, JSON.stringify(audit.json));
      const ips = (audit.json.events as { ip: string }[]).map((e) => e.ip);
      assert.ok(ips.includes('2001:db8:77:1:1::1'), ips.join(' '));
    } finally {
      await s.close();
    }
  });

  it('locks an address that tries many usernames', async () => {
    const s = await startServer({ env: { LOGIN_MAX_FAILURES: '2', LOGIN_LOCK_MINUTES: '1' } });
    try {
      await makeUser(s, 'bystander');
      let last = 0;
      // The address limit is five times the username limit: 10 failures over 10 different names.
      for (let i = 0; i < 10; i++)
        last = (await call(s, 'POST', '/api/auth/login', { token: null, body: { username: `guess${i}`, password: 'x' } })).status;
      assert.equal(last, 429);
      const r = await call(s, 'POST', '/api/auth/login', { token: null, body: { username: 'bystander', password: STRONG } });
      assert.equal(r.status, 429);
      assert.ok(Number(r.headers.get('retry-after')) > 50);
    } finally {
      await s.close();
    }
  });

  it('unknown usernames and wrong passwords get the same answer in comparable time', async () => {
    const s = await startServer();
    try {
      await makeUser(s, 'known');
      const known: number[] = [];
      const unknown: number[] = [];
      for (let i = 0; i < 4; i++) {
        const [a, ta] = await timed(() =>
          call(s, 'POST', '/api/auth/login', { token: null, body: { username: 'known', password: `bad-${i}` } }),
        );
        const [b, tb] = await timed(() =>
          call(s, 'POST', '/api/auth/login', { token: null, body: { username: `unknown-${i}`, password: `bad-${i}` } }),
        );
        assert.equal(a.status, 401);
        assert.deepEqual(a.json, b.json);
        known.push(ta);
        unknown.push(tb);
      }
      const med = (xs: number[]) => xs.sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
      // Both verify one scrypt hash; without the dummy hash the unknown name would answer in well under a tenth.
      assert.ok(med(unknown) > med(known) * 0.5, `known ${known.map(Math.round)} unknown ${unknown.map(Math.round)}`);
    } finally {
      await s.close();
    }
  });
});
