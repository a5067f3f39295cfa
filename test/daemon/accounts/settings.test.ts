/** Settings record, branding with logo upload checks, and the audit log of security events. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { makeImage, tempDir } from '../../helpers/fixtures.js';
import { filePart, form, startServer, type TestServer } from '../../helpers/server.js';
import { call, makeUser, STRONG } from './http.js';

const dir = tempDir();

describe('settings, branding and audit', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(() => s.close());

  it('settings: admins read and write all, users read only the UI part, values are validated and take effect (sync window 0 → 202)', async () => {
    const u = await makeUser(s, 'reader');
    const r = await call(s, 'GET', '/api/v1/settings', { token: u.token });
    assert.equal(r.status, 200);
    assert.deepEqual(r.json.settings, { outputTtlHours: 24, jobTtlHours: 24, features: { mfa: true, oidc: true, saml: true } });
    const a = await call(s, 'GET', '/api/v1/settings');
    assert.deepEqual(a.json.settings, {
      syncWindowMs: s.config.syncWaitMs,
      outputTtlHours: 24,
      jobRecordTtlHours: 168,
      sweepIntervalS: 600,
      jobTtlHours: 24,
      maxUploadMb: s.config.maxUploadMb,
      libraryQuotaMb: s.config.libraryQuotaMb,
      userQuotaMb: s.config.userQuotaMb,
      rateLimitPerMinute: s.config.rateLimitPerMinute,
      features: { mfa: true, oidc: true, saml: true },
      ssoDefaultRole: 'user',
    });
    for (const bad of [
      { jobTtlHours: -1 },
      { syncWindowMs: 'x' },
      { features: { warp: true } },
      { ssoDefaultRole: 'root' },
      { other: 1 },
    ]) {
      const b = await call(s, 'PUT', '/api/v1/settings', { body: bad });
      assert.equal(b.status, 400, JSON.stringify(bad));
      assert.equal(b.json.error.code, 'VALIDATION_ERROR');
    }
    const w = await call(s, 'PUT', '/api/v1/settings', { body: { syncWindowMs: 0, jobTtlHours: 2, ssoDefaultRole: 'admin' } });
    assert.equal(w.status, 200);
    assert.equal(w.json.settings.jobTtlHours, 2);
    assert.equal(w.json.settings.outputTtlHours, 2, 'jobTtlHours is the old name of outputTtlHours');
    assert.equal(w.json.settings.features.mfa, true, 'untouched keys stay');
    const jpg = await makeImage(dir, 'a.jpg', 40, 30);
    const run = await call(s, 'POST', '/api/v1/tools/image/resize', {
      token: u.token,
      form: await form({ file: await filePart(jpg), settings: '{"width": 10}' }),
    });
    assert.equal(run.status, 202, 'a zero sync window answers at once with a job');
    // Survives a restart (stored, and applied at start).
    s = await s.restart();
    assert.equal((await s.app.kiln.limits.settings()).outputTtlHours, 2);
    assert.equal(s.config.syncWaitMs, 0);
    assert.equal((await call(s, 'PUT', '/api/v1/settings', { body: { syncWindowMs: 10_000, ssoDefaultRole: 'user' } })).status, 200);
  });

  it('branding: public read, admin write with colour checks, logo upload with type and size checks', async () => {
    const pub = await call(s, 'GET', '/api/v1/branding', { token: null });
    assert.equal(pub.status, 200);
    assert.equal(pub.json.branding.productName, 'kiln');
    assert.equal(pub.json.branding.logoUrl, null);
    assert.equal((await call(s, 'PUT', '/api/v1/branding', { body: { colors: { primary: 'red' } } })).status, 400);
    assert.equal((await call(s, 'PUT', '/api/v1/branding', { body: { productName: '' } })).status, 400);
    const put = await call(s, 'PUT', '/api/v1/branding', { body: { productName: 'Acme Media', colors: { primary: '#112233' } } });
    assert.equal(put.status, 200);
    assert.equal(put.json.branding.productName, 'Acme Media');
    assert.equal(put.json.branding.colors.primary, '#112233');
    assert.equal(put.json.branding.colors.accent, '#1c7ed6');

    const png = await sharp({ create: { width: 32, height: 16, channels: 4, background: '#ff0000' } })
      .png()
      .toBuffer();
    const up = await call(s, 'POST', '/api/v1/branding/logo', { form: await form({ file: new File([png], 'logo.png') }) });
    assert.equal(up.status, 201, JSON.stringify(up.json));
    assert.match(up.json.branding.logoUrl, /^\/api\/v1\/branding\/logo\?v=\d+$/);
    const got = await fetch(s.url + up.json.branding.logoUrl);
    assert.equal(got.status, 200);
    assert.equal(got.headers.get('content-type'), 'image/png');
    assert.equal(got.headers.get('x-content-type-options'), 'nosniff');
    const meta = await sharp(Buffer.from(await got.arrayBuffer())).metadata();
    assert.equal(meta.width, 32);

    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
    const s1 = await call(s, 'POST', '/api/v1/branding/logo', { form: await form({ file: new File([svg], 'logo.png') }) });
    assert.equal(s1.status, 415);
    const text = await call(s, 'POST', '/api/v1/branding/logo', {
      form: await form({ file: new File([Buffer.from('hello')], 'logo.jpg') }),
    });
    assert.equal(text.status, 415);
    const noise = Buffer.alloc(600 * 1024, 7);
    const big = await call(s, 'POST', '/api/v1/branding/logo', {
      form: await form({ file: new File([Buffer.concat([png, noise])], 'big.png') }),
    });
    assert.equal(big.status, 413);
    // The first logo is still the one served.
    assert.equal((await fetch(s.url + '/api/v1/branding/logo')).headers.get('content-type'), 'image/png');
    assert.equal((await call(s, 'DELETE', '/api/v1/branding/logo')).status, 200);
    assert.equal((await call(s, 'GET', '/api/v1/branding/logo', { token: null })).status, 404);
  });

  it('audit: security events with actor, target and address, no secrets', async () => {
    const u = await makeUser(s, 'audited');
    await call(s, 'POST', '/api/auth/login', { token: null, body: { username: 'audited', password: 'Wrong-Password-1' } });
    const k = await call(s, 'POST', '/api/v1/api-keys', { token: u.token, body: { name: 'audit-key' } });
    await call(s, 'DELETE', `/api/v1/api-keys/${k.json.id}`, { token: u.token });
    await call(s, 'PUT', `/api/auth/users/${u.id}`, { body: { role: 'admin' } });
    await call(s, 'POST', '/api/auth/change-password', {
      token: u.token,
      body: { currentPassword: STRONG, newPassword: 'Audit-Pass-123' },
    });
    const r = await call(s, 'GET', '/api/v1/admin/audit?limit=200');
    assert.equal(r.status, 200);
    const ev = r.json.events as {
      event: string;
      actor: { username: string } | null;
      target: string | null;
      ip: string;
      details: Record<string, unknown> | null;
      at: string;
    }[];
    const has = (e: string, pred: (x: (typeof ev)[number]) => boolean = () => true) =>
      assert.ok(
        ev.some((x) => x.event === e && pred(x)),
        e,
      );
    has('user.create', (x) => x.target === 'audited' && x.actor?.username === 'admin');
    has('login.success', (x) => x.target === 'audited' && x.ip === '127.0.0.1');
    has('login.failure', (x) => x.target === 'audited');
    has('key.create', (x) => x.target === k.json.id && x.actor?.username === 'audited');
    has('key.revoke', (x) => x.target === k.json.id);
    has('user.update', (x) => JSON.stringify(x.details).includes('"to":"admin"'));
    has('password.change', (x) => x.target === 'audited');
    has('settings.update');
    has('branding.update');
    const text = JSON.stringify(ev);
    for (const secret of [STRONG, 'Wrong-Password-1', 'Audit-Pass-123', k.json.key, s.adminPassword]) assert.ok(!text.includes(secret));
    // Newest first, and paged with before=.
    assert.ok(Date.parse(ev[0]!.at) >= Date.parse(ev[ev.length - 1]!.at));
    const older = await call(s, 'GET', `/api/v1/admin/audit?limit=5&before=${encodeURIComponent(ev[0]!.at)}`);
    assert.ok(older.json.events.length <= 5);
    assert.ok(older.json.events.every((e: { at: string }) => Date.parse(e.at) < Date.parse(ev[0]!.at)));
  });
});
