/**
 * OIDC round trip against a real OpenID provider (oidc-provider) listening on 127.0.0.1: kiln's
 * /login redirect, the provider's own login and consent pages (devInteractions), the code exchange
 * with PKCE, ID-token verification, user creation/linking, the admin group, and tampered requests.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import Provider from 'oidc-provider';
import { resolveAccountsConfig } from '../../../daemon/accounts/config.js';
import { userForIdentity } from '../../../daemon/accounts/sso.js';
import { startServer, type TestServer } from '../../helpers/server.js';
import { call, STRONG } from './http.js';

const ACCOUNTS: Record<string, { preferred_username: string; email: string; groups: string[] }> = {
  alice: { preferred_username: 'alice', email: 'alice@example.test', groups: ['staff'] },
  root: { preferred_username: 'root-person', email: 'root@example.test', groups: ['staff', 'kiln-admins'] },
  linked: { preferred_username: 'linked-sso', email: 'linked@example.test', groups: [] },
  boss: { preferred_username: 'boss-sso', email: 'boss@example.test', groups: [] },
  careful: { preferred_username: 'careful-sso', email: 'careful@example.test', groups: [] },
  mimic: { preferred_username: 'ADMIN', email: 'mimic@example.test', groups: [] },
  rising: { preferred_username: 'rising-sso', email: 'rising@example.test', groups: [] },
  veteran: { preferred_username: 'veteran-sso', email: 'veteran@example.test', groups: [] },
};

/** A browser's cookie jar for one origin, enough for the provider's interaction cookies. */
class Jar {
  private cookies = new Map<string, string>();
  take(res: Response): void {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair!.indexOf('=');
      const name = pair!.slice(0, i);
      const value = pair!.slice(i + 1);
      if (/max-age=0|expires=thu, 01 jan 1970/i.test(c) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

async function go(jar: Jar, url: string, init: RequestInit = {}): Promise<Response> {
  const res = await fetch(url, {
    ...init,
    redirect: 'manual',
    headers: { ...(init.headers as Record<string, string>), cookie: jar.header() },
  });
  jar.take(res);
  return res;
}

/** Drives the provider's pages like a browser until it redirects back to `callbackPrefix`. */
async function signInAtProvider(authUrl: string, account: string, callbackPrefix: string): Promise<string> {
  const jar = new Jar();
  let url = authUrl;
  for (let hops = 0; hops < 20; hops++) {
    if (url.startsWith(callbackPrefix)) return url;
    const res = await go(jar, url);
    if (res.status >= 300 && res.status < 400) {
      url = new URL(res.headers.get('location')!, url).href;
      continue;
    }
    const html = await res.text();
    assert.equal(res.status, 200, html.slice(0, 300));
    const action = new URL(/action="([^"]+)"/.exec(html)![1]!, url).href;
    const body = /name="login"/.test(html)
      ? new URLSearchParams({ prompt: 'login', login: account, password: 'anything' })
      : new URLSearchParams({ prompt: 'consent' });
    const post = await go(jar, action, { method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.ok(post.status >= 300 && post.status < 400, `interaction answered ${post.status}`);
    url = new URL(post.headers.get('location')!, action).href;
  }
  throw new Error('too many redirects at the provider');
}

describe('OIDC sign-in against a real provider', () => {
  let s: TestServer;
  let idp: Server;
  let issuer: string;
  let callback: string;

  before(async () => {
    s = await startServer();
    callback = `${s.url}/api/auth/oidc/callback`;
    idp = createServer();
    await new Promise<void>((r) => idp.listen(0, '127.0.0.1', r));
    issuer = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`;
    const provider = new Provider(issuer, {
      clients: [
        {
          client_id: 'kiln',
          client_secret: 'kiln-client-secret-0123456789',
          redirect_uris: [callback],
          response_types: ['code'],
          grant_types: ['authorization_code'],
          token_endpoint_auth_method: 'client_secret_basic',
        },
      ],
      claims: { openid: ['sub'], profile: ['preferred_username'], email: ['email', 'email_verified'], groups: ['groups'] },
      async findAccount(_ctx, id) {
        const a = ACCOUNTS[id];
        if (!a) return undefined;
        return {
          accountId: id,
          async claims() {
            return { sub: id, ...a, email_verified: true };
          },
        };
      },
      features: { devInteractions: { enabled: true } },
      cookies: { keys: ['oidc-test-cookie-key'] },
    });
    idp.on('request', provider.callback());
    // The daemon's port is only known once it listens, so the OIDC settings are resolved now from the
    // same variables an operator sets.
    s.config.accounts = resolveAccountsConfig({
      OIDC_ISSUER: issuer,
      OIDC_CLIENT_ID: 'kiln',
      OIDC_CLIENT_SECRET: 'kiln-client-secret-0123456789',
      OIDC_REDIRECT_URL: callback,
      OIDC_SCOPES: 'openid profile email groups',
      OIDC_ADMIN_GROUP: 'kiln-admins',
    });
  });
  after(async () => {
    await s.close();
    idp.closeAllConnections();
    await new Promise((r) => idp.close(r));
  });

  async function startLogin(): Promise<{ authUrl: URL; cookie: string }> {
    const r = await call(s, 'GET', '/api/auth/oidc/login', { token: null });
    assert.equal(r.status, 302);
    const authUrl = new URL(r.headers.get('location')!);
    const cookie = r.headers
      .getSetCookie()
      .find((c) => c.startsWith('kiln_oidc_state='))!
      .split(';')[0]!;
    return { authUrl, cookie };
  }

  it('login redirects to the provider with state, nonce and PKCE S256', async () => {
    const { authUrl, cookie } = await startLogin();
    assert.equal(authUrl.origin, issuer);
    const p = authUrl.searchParams;
    assert.equal(p.get('client_id'), 'kiln');
    assert.equal(p.get('redirect_uri'), callback);
    assert.equal(p.get('response_type'), 'code');
    assert.equal(p.get('code_challenge_method'), 'S256');
    assert.match(p.get('code_challenge')!, /^[A-Za-z0-9_-]{43}$/);
    assert.ok(p.get('state') && p.get('nonce'));
    assert.equal(cookie, `kiln_oidc_state=${p.get('state')}`);
    assert.equal(p.get('scope'), 'openid profile email groups');
  });

  it('completes the code flow: creates the user with the default role, then finds the same user again', async () => {
    const { authUrl, cookie } = await startLogin();
    const back = await signInAtProvider(authUrl.href, 'alice', callback);
    const r = await call(s, 'GET', back.slice(s.url.length), { token: null, headers: { cookie } });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.equal(r.json.created, true);
    assert.equal(r.json.user.username, 'alice');
    assert.equal(r.json.user.role, 'user');
    const me = await call(s, 'GET', '/api/auth/session', { token: r.json.token });
    assert.equal(me.json.user.username, 'alice');
    // The callback URL is single-use (state consumed), even with the right cookie.
    assert.equal((await call(s, 'GET', back.slice(s.url.length), { token: null, headers: { cookie } })).status, 401);

    const second = await startLogin();
    const back2 = await signInAtProvider(second.authUrl.href, 'alice', callback);
    const r2 = await call(s, 'GET', back2.slice(s.url.length), { token: null, headers: { cookie: second.cookie } });
    assert.equal(r2.status, 200);
    assert.equal(r2.json.created, false);
    assert.equal(r2.json.user.id, r.json.user.id);
    const users = (await call(s, 'GET', '/api/auth/users')).json.users;
    assert.equal(users.find((u: { username: string }) => u.username === 'alice').sso, 'oidc');
  });

  it("a subject is bound to its issuer: another provider's user with the same sub is another person; older links are bound at their next sign-in", async () => {
    const db = s.app.kiln.store.db;
    // A link as kiln made it before subjects carried the issuer: the bare sub.
    const old = await call(s, 'POST', '/api/auth/users', { body: { username: 'veteran-local', password: STRONG } });
    await db.updateTable('users').set({ sso_provider: 'oidc', sso_subject: 'veteran' }).where('id', '=', old.json.user.id).execute();
    const { authUrl, cookie } = await startLogin();
    const back = await signInAtProvider(authUrl.href, 'veteran', callback);
    const r = await call(s, 'GET', back.slice(s.url.length), { token: null, headers: { cookie } });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.equal(r.json.created, false);
    assert.equal(r.json.user.id, old.json.user.id, 'the old link still signs its user in');
    const row = await db.selectFrom('users').select('sso_subject').where('id', '=', old.json.user.id).executeTakeFirstOrThrow();
    assert.equal(row.sso_subject, `${issuer}!veteran`);
    // After a switch to another provider, its user "veteran" is not this one.
    const other = await userForIdentity(
      s.app.kiln,
      { provider: 'oidc', subject: 'https://other-idp.example!veteran', legacySubject: 'veteran', username: 'veteran', groups: [] },
      undefined,
    );
    assert.equal(other.created, true);
    assert.notEqual(other.user.id, old.json.user.id);
  });

  it('the admin-group claim makes an admin', async () => {
    const a = await startLogin();
    const r = await call(s, 'GET', (await signInAtProvider(a.authUrl.href, 'root', callback)).slice(s.url.length), {
      token: null,
      headers: { cookie: a.cookie },
    });
    assert.equal(r.status, 200);
    assert.equal(r.json.user.role, 'admin');
    assert.equal(r.json.user.username, 'root-person');
  });

  async function ssoAs(account: string) {
    const b = await startLogin();
    return call(s, 'GET', (await signInAtProvider(b.authUrl.href, account, callback)).slice(s.url.length), {
      token: null,
      headers: { cookie: b.cookie },
    });
  }

  it('links an existing local user by verified e-mail only with SSO_LINK_EXISTING, never an admin or an MFA user', async () => {
    const local = await call(s, 'POST', '/api/auth/register', { body: { username: 'linked@example.test', password: STRONG } });
    assert.equal(local.status, 201);
    // Off by default: refused, naming the conflict, and nothing is linked.
    const refused = await ssoAs('linked');
    assert.equal(refused.status, 403, JSON.stringify(refused.json));
    assert.equal(refused.json.error.reason, 'sso-link-refused');
    assert.match(refused.json.error.message, /SSO_LINK_EXISTING/);
    const users = () => call(s, 'GET', '/api/auth/users').then((r) => r.json.users as { username: string; sso?: string }[]);
    assert.ok(!(await users()).find((u) => u.username === 'linked@example.test')!.sso);

    const admin = await call(s, 'POST', '/api/auth/register', { body: { username: 'boss@example.test', password: STRONG, role: 'admin' } });
    assert.equal(admin.status, 201);
    const mfaUser = await call(s, 'POST', '/api/auth/register', { body: { username: 'careful@example.test', password: STRONG } });
    await s.app.kiln.store.db.updateTable('users').set({ mfa_enabled: 1 }).where('id', '=', mfaUser.json.user.id).execute();
    s.config.accounts.ssoLinkExisting = true;
    try {
      const r2 = await ssoAs('linked');
      assert.equal(r2.status, 200, JSON.stringify(r2.json));
      assert.equal(r2.json.created, false);
      assert.equal(r2.json.user.id, local.json.user.id);
      // An admin and a user with MFA are never taken over through the IdP, whatever the setting.
      for (const [account, why] of [
        ['boss', /administrator/],
        ['careful', /MFA/],
      ] as const) {
        const r = await ssoAs(account);
        assert.equal(r.status, 403, `${account}: ${JSON.stringify(r.json)}`);
        assert.equal(r.json.error.reason, 'sso-link-refused');
        assert.match(r.json.error.message, why);
        assert.equal(r.json.token, undefined);
      }
      const audit = (await call(s, 'GET', '/api/v1/admin/audit?event=login')).json.events.map(
        (e: { event: string; target: string }) => `${e.event} ${e.target}`,
      );
      assert.ok(audit.includes('login.sso-refused boss@example.test'), audit.join('\n'));
    } finally {
      s.config.accounts.ssoLinkExisting = false;
    }
  });

  it('joining the admin group promotes at the next sign-in, in the audit log; a disabled account is not promoted', async () => {
    const first = await ssoAs('rising');
    assert.equal(first.json.user.role, 'user');
    ACCOUNTS.rising!.groups = ['kiln-admins'];
    const second = await ssoAs('rising');
    assert.equal(second.status, 200, JSON.stringify(second.json));
    assert.equal(second.json.user.role, 'admin');
    const events = (await call(s, 'GET', '/api/v1/admin/audit?event=user.update')).json.events;
    const promoted = events.find((e: { target: string }) => e.target === 'rising-sso');
    assert.ok(promoted, JSON.stringify(events));
    assert.deepEqual(promoted.details.role, { from: 'user', to: 'admin' });

    ACCOUNTS.careful2 = { preferred_username: 'quiet-sso', email: 'quiet@example.test', groups: [] };
    const quiet = await ssoAs('careful2');
    assert.equal((await call(s, 'PUT', `/api/auth/users/${quiet.json.user.id}`, { body: { disabled: true } })).status, 200);
    ACCOUNTS.careful2.groups = ['kiln-admins'];
    assert.equal((await ssoAs('careful2')).status, 401);
    const users = (await call(s, 'GET', '/api/auth/users')).json.users;
    assert.equal(users.find((u: { username: string }) => u.username === 'quiet-sso').role, 'user');
  });

  it('an IdP user calling itself a case variant of a local name gets a numbered name, not a look-alike', async () => {
    const r = await ssoAs('mimic');
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.equal(r.json.created, true);
    assert.equal(r.json.user.username, 'ADMIN-2');
    assert.equal(r.json.user.role, 'user');
  });

  it('an SSO user with MFA still answers the MFA challenge', async () => {
    const first = await ssoAs('alice');
    assert.equal(first.status, 200);
    await s.app.kiln.store.db.updateTable('users').set({ mfa_enabled: 1 }).where('id', '=', first.json.user.id).execute();
    try {
      const r = await ssoAs('alice');
      assert.equal(r.status, 200);
      assert.equal(r.json.token, undefined, 'no session before the second factor');
      assert.equal(r.json.requiresMfa, true);
      assert.match(r.json.mfaToken, /^mfa_/);
    } finally {
      await s.app.kiln.store.db.updateTable('users').set({ mfa_enabled: 0 }).where('id', '=', first.json.user.id).execute();
    }
  });

  it('refuses a callback without the browser cookie, with a forged state, or with a tampered code', async () => {
    const { authUrl, cookie } = await startLogin();
    const back = new URL(await signInAtProvider(authUrl.href, 'alice', callback));
    const path = back.pathname + back.search;
    const noCookie = await call(s, 'GET', path, { token: null });
    assert.equal(noCookie.status, 401);
    assert.equal(noCookie.json.error.reason, 'oidc-state-mismatch');
    const forged = new URL(back);
    forged.searchParams.set('state', 'forged-state');
    assert.equal(
      (await call(s, 'GET', forged.pathname + forged.search, { token: null, headers: { cookie: 'kiln_oidc_state=forged-state' } })).status,
      401,
    );
    const tampered = new URL(back);
    tampered.searchParams.set('code', back.searchParams.get('code')!.slice(0, -2) + 'xx');
    const t = await call(s, 'GET', tampered.pathname + tampered.search, { token: null, headers: { cookie } });
    assert.equal(t.status, 401);
    assert.equal(t.json.error.reason, 'oidc-failed');
    assert.equal(t.json.token, undefined);
  });

  it('answers FEATURE_DISABLED when switched off in the settings', async () => {
    assert.equal((await call(s, 'PUT', '/api/v1/settings', { body: { features: { oidc: false } } })).status, 200);
    const r = await call(s, 'GET', '/api/auth/oidc/login', { token: null });
    assert.equal(r.status, 403);
    assert.equal(r.json.error.code, 'FEATURE_DISABLED');
    assert.equal((await call(s, 'PUT', '/api/v1/settings', { body: { features: { oidc: true } } })).status, 200);
  });

  // Last in this suite: it locks 127.0.0.1 out of OIDC sign-ins.
  it('failed callbacks lock the client address like failed password logins (429 with Retry-After, audited)', async () => {
    const statuses: number[] = [];
    let locked: Awaited<ReturnType<typeof call>> | undefined;
    for (let i = 0; i < 15 && !locked; i++) {
      const r = await call(s, 'GET', `/api/auth/oidc/callback?code=x&state=forged-${i}`, {
        token: null,
        headers: { cookie: `kiln_oidc_state=forged-${i}` },
      });
      statuses.push(r.status);
      if (r.status === 429) locked = r;
    }
    assert.ok(locked, `never locked: ${statuses.join(' ')}`);
    assert.ok(Number(locked.headers.get('retry-after')) >= 1);
    assert.ok(statuses.length <= 11, statuses.join(' '));
    // While locked, a genuine round trip from that address is refused before anything is checked.
    const { authUrl, cookie } = await startLogin();
    const back = new URL(await signInAtProvider(authUrl.href, 'alice', callback));
    const r = await call(s, 'GET', back.pathname + back.search, { token: null, headers: { cookie } });
    assert.equal(r.status, 429, JSON.stringify(r.json));
    const events = await call(s, 'GET', '/api/v1/admin/audit?event=login.failure&limit=5');
    assert.ok(
      events.json.events.some((e: { target: string }) => e.target === 'oidc'),
      JSON.stringify(events.json),
    );
  });

  // After the lock-out test: sign-in starts are counted apart from callbacks.
  it('sign-in starts are limited per address (each stores its state for 10 minutes)', async () => {
    let limited: Awaited<ReturnType<typeof call>> | undefined;
    // The bucket refills one start a second: on a loaded machine 61 starts take several seconds, so the
    // starts allowed are 60 plus those refilled meanwhile (a fixed 61 failed under load, not the limit).
    const t0 = Date.now();
    let accepted = 0;
    for (let i = 0; i <= 200 && !limited; i++) {
      const r = await call(s, 'GET', '/api/auth/oidc/login', { token: null });
      if (r.status === 429) limited = r;
      else {
        assert.equal(r.status, 302, JSON.stringify(r.json));
        accepted++;
      }
    }
    assert.ok(limited, 'starts beyond 60 a minute are refused');
    const refilled = Math.ceil((Date.now() - t0) / 1000);
    assert.ok(accepted <= 60 + refilled, `${accepted} starts accepted in ${Date.now() - t0} ms`);
    assert.equal(limited.json.error.code, 'RATE_LIMITED');
    assert.match(limited.json.error.message, /OIDC sign-ins started from this address: at most 60 a minute/);
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    const rows = await s.app.kiln.store.db.selectFrom('sso_requests').select('id').where('kind', '=', 'oidc').execute();
    assert.ok(rows.length <= 61 + refilled, `${rows.length} states stored`);
  });
});

describe('OIDC not configured', () => {
  it('login answers FEATURE_DISABLED naming the variables', async () => {
    const s = await startServer();
    try {
      const r = await call(s, 'GET', '/api/auth/oidc/login', { token: null });
      assert.equal(r.status, 403);
      assert.match(r.json.error.message, /OIDC_ISSUER/);
    } finally {
      await s.close();
    }
  });
});
