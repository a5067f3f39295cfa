/**
 * Wrong API-key secrets under a prefix that exists go through the login throttle (daemon/auth/authenticate.ts):
 * the (prefix, address) pair and the address lock with 429 + Retry-After and no scrypt, a secret already
 * seen failing is refused without one, the prefix itself never locks (its holder elsewhere keeps working),
 * and right keys sent at once are not refused as attempts in flight. On PostgreSQL two daemons share the counts.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { login, startServer, type TestServer } from '../../helpers/server.js';
import { pgSchema, pgUnavailable, TEST_PG_URL } from '../../helpers/scale.js';
import { call, type Res } from './http.js';

const LOCK_S = 3;
const ENV = {
  LOGIN_MAX_FAILURES: '4',
  LOGIN_LOCK_MINUTES: String(LOCK_S / 60),
  TRUST_PROXY: '127.0.0.1',
  API_KEY_CREATE_PER_HOUR: '100',
};

/** GET /api/auth/session with `key`, from `ip` (X-Forwarded-For, believed from the test's own address). */
const session = (s: TestServer, key: string, ip: string) =>
  call(s, 'GET', '/api/auth/session', { token: key, headers: { 'x-forwarded-for': ip } });

/** The key's `si_` and public prefix with another secret. */
const wrongSecret = (key: string) => key.slice(0, 15) + randomBytes(42).toString('hex');

async function newKey(s: TestServer, name: string): Promise<{ id: string; key: string }> {
  const r = await call(s, 'POST', '/api/v1/api-keys', { body: { name } });
  assert.equal(r.status, 201, JSON.stringify(r.json));
  return r.json;
}

/**
 * The answers to `n` requests sent one after the other, and the CPU per request of this process (the
 * daemon, its scrypt threads, the client).
 */
async function cpuPer(n: number, f: (i: number) => Promise<Res>): Promise<{ answers: Res[]; cpuMs: number }> {
  const start = process.cpuUsage();
  const answers: Res[] = [];
  for (let i = 0; i < n; i++) answers.push(await f(i));
  const used = process.cpuUsage(start);
  return { answers, cpuMs: (used.user + used.system) / 1000 / n };
}

async function keyEvents(s: TestServer): Promise<{ event: string; target: string; ip: string; details: any }[]> {
  const r = await call(s, 'GET', '/api/v1/admin/audit?event=key.auth&limit=500');
  assert.equal(r.status, 200, JSON.stringify(r.json));
  return r.json.events;
}

function assertUnknown(r: Res): void {
  assert.equal(r.status, 401, JSON.stringify(r.json));
  assert.equal(r.json.error.details.reason, 'unknown');
}

function assertLocked(r: Res): void {
  assert.equal(r.status, 429, JSON.stringify(r.json));
  assert.equal(r.json.error.code, 'RATE_LIMITED');
  assert.match(r.json.error.message, /API-key attempts/);
  const retry = Number(r.headers.get('retry-after'));
  assert.ok(retry >= 1 && retry <= LOCK_S, `Retry-After ${retry}`);
  assert.equal(r.json.error.details.retryAfterSeconds, retry);
}

describe('API-key secret throttle', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer({ env: ENV });
  });
  after(() => s.close());

  it('wrong secrets from one address: 401, then 429 with Retry-After and no scrypt; the holder elsewhere gets in; audited', async () => {
    const k = await newKey(s, 'target');
    const attacker = '203.0.113.9';
    const checked = await cpuPer(3, () => session(s, wrongSecret(k.key), attacker));
    checked.answers.forEach(assertUnknown);
    // The fourth failure reaches LOGIN_MAX_FAILURES and locks the pair.
    assertLocked(await session(s, wrongSecret(k.key), attacker));
    const refused = await cpuPer(15, () => session(s, wrongSecret(k.key), attacker));
    refused.answers.forEach(assertLocked);
    assert.ok(
      refused.cpuMs < checked.cpuMs / 4,
      `a refused attempt used ${refused.cpuMs.toFixed(1)} ms of CPU, a checked one ${checked.cpuMs.toFixed(1)} ms`,
    );
    // Locked is locked, right secret or not (its first use here: no cached verification to fall back on)…
    assertLocked(await session(s, k.key, attacker));
    // …but only for that address: the holder, elsewhere, gets in.
    const holder = await session(s, k.key, '198.51.100.7');
    assert.equal(holder.status, 200, JSON.stringify(holder.json));
    assert.equal(holder.json.via, 'api-key');

    // Every checked failure is in the audit log, as failed logins are; the refused ones left nothing.
    const events = (await keyEvents(s)).filter((e) => e.target === k.id);
    assert.deepEqual(events.map((e) => e.event).sort(), ['key.auth-failure', 'key.auth-failure', 'key.auth-failure', 'key.auth-locked']);
    assert.ok(events.every((e) => e.ip === attacker && e.details.prefix === k.key.slice(0, 15) && e.details.why === 'wrong-secret'));
    assert.ok(
      events.every((e) => !JSON.stringify(e).includes(k.key.slice(15, 40))),
      'no secret in the audit log',
    );

    await new Promise((r) => setTimeout(r, LOCK_S * 1000 + 300));
    assert.equal((await session(s, k.key, attacker)).status, 200, 'the address gets in with the right key once the lock is over');
  });

  it('guesses from many addresses, past the limit, never lock the key: its holder gets in', async () => {
    const k = await newKey(s, 'popular');
    const guess = wrongSecret(k.key);
    assertUnknown(await session(s, guess, '203.0.113.20'));
    // One try each from many addresses, the same guess and new ones: no address reaches its limit, and the
    // prefix has none. (At once: past half the limit the prefix's failures are answered slowly, as a
    // username's are.)
    const tries = await Promise.all(
      Array.from({ length: 12 }, (_, i) => session(s, i % 2 ? guess : wrongSecret(k.key), `203.0.113.${21 + i}`)),
    );
    tries.forEach(assertUnknown);
    const why = (await keyEvents(s)).filter((e) => e.target === k.id).map((e) => e.details.why);
    assert.equal(why.filter((w) => w === 'wrong-secret').length, 7);
    assert.equal(why.filter((w) => w === 'replayed-secret').length, 6);
    // 13 failures of the prefix, three times the limit: its holder gets in, from an address of its own.
    assert.equal((await session(s, k.key, '198.51.100.8')).status, 200);
  });

  it('a right key sent three times the limit at once gets in every time, and so do many right keys at once from one address', async () => {
    const k = await newKey(s, 'burst');
    const burst = await Promise.all(Array.from({ length: 12 }, () => session(s, k.key, '192.0.2.10')));
    assert.deepEqual(
      burst.map((r) => r.status),
      Array(12).fill(200),
    );
    // The address limit is five times LOGIN_MAX_FAILURES (20): 24 keys at once through one proxy address.
    const keys = await Promise.all(Array.from({ length: 24 }, (_, i) => newKey(s, `fleet-${i}`)));
    const fleet = await Promise.all(keys.map((x) => session(s, x.key, '192.0.2.11')));
    assert.deepEqual(
      fleet.map((r) => r.status),
      Array(24).fill(200),
    );
  });
});

it('a secret seen failing is refused without a scrypt, from any address', async () => {
  // A limit high enough that nothing here is slowed down or locked: the CPU is the checks' alone.
  const s = await startServer({ env: { ...ENV, LOGIN_MAX_FAILURES: '40' } });
  try {
    const k = await newKey(s, 'replayed');
    const guess = wrongSecret(k.key);
    // The first check of the path warms it up (module loading, JIT): not measured.
    assertUnknown(await session(s, wrongSecret(k.key), '203.0.113.39'));
    const checked = await cpuPer(4, (i) => session(s, i ? wrongSecret(k.key) : guess, `203.0.113.${40 + i}`));
    checked.answers.forEach(assertUnknown);
    const replays = await cpuPer(12, (i) => session(s, guess, `203.0.113.${60 + i}`));
    replays.answers.forEach(assertUnknown);
    assert.ok(
      replays.cpuMs < checked.cpuMs / 3,
      `a replay used ${replays.cpuMs.toFixed(1)} ms of CPU, a checked guess ${checked.cpuMs.toFixed(1)} ms`,
    );
    // A new guess sent from many addresses at once is checked once.
    const fresh = wrongSecret(k.key);
    (await Promise.all(Array.from({ length: 8 }, (_, i) => session(s, fresh, `203.0.113.${80 + i}`)))).forEach(assertUnknown);
    const why = (await keyEvents(s)).map((e) => e.details.why);
    assert.deepEqual([why.filter((w) => w === 'wrong-secret').length, why.filter((w) => w === 'replayed-secret').length], [6, 19]);
  } finally {
    await s.close();
  }
});

const PG = TEST_PG_URL;

describe('API-key secret throttle, two daemons on one PostgreSQL database', { skip: await pgUnavailable(PG) }, () => {
  let schema: Awaited<ReturnType<typeof pgSchema>> | undefined;
  const password = `kt-${randomBytes(8).toString('hex')}`;
  let a: TestServer;
  let b: TestServer;
  before(async () => {
    schema = await pgSchema(PG);
    const env = { ...ENV, DATABASE_URL: schema.url, ADMIN_PASSWORD: password, SECRET_KEY: randomBytes(32).toString('hex') };
    // ADMIN_PASSWORD set: both start on the one admin of the shared database (the helper signs nobody in).
    a = await startServer({ generatePassword: true, env });
    b = await startServer({ generatePassword: true, env });
    a.token = await login(a.url, 'admin', password);
    b.token = await login(b.url, 'admin', password);
  });
  after(async () => {
    await Promise.allSettled([a?.close(), b?.close()]);
    await schema?.drop();
  });

  it('failures counted on one instance lock the pair on the other', async () => {
    const k = await newKey(a, 'shared');
    const attacker = '203.0.113.50';
    for (const s of [a, a, b]) assertUnknown(await session(s, wrongSecret(k.key), attacker));
    assertLocked(await session(b, wrongSecret(k.key), attacker));
    assertLocked(await session(a, k.key, attacker));
    assert.equal((await session(b, k.key, '198.51.100.9')).status, 200);
    const events = (await keyEvents(a)).filter((e) => e.target === k.id).map((e) => e.event);
    assert.equal(events.length, 4);
  });
});
