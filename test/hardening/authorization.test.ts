/**
 * Authorization matrix: every route the daemon registers × {anonymous, user, other user, admin, API key,
 * expired key, revoked key}, checked against the spec's permission table (interface-spec.md,
 * "Authentication" → Permissions and the Access column of the endpoint tables).
 *
 * The route list comes from fastify's own table (registeredRoutes), so a route added without an entry in
 * EXPECTED fails the first test. The checks are about who gets in, not what the route does: requests carry
 * an empty or minimal body, and "let in" means any answer but 401/403 (a 400 for the missing body is fine).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { registeredRoutes } from '../../daemon/server.js';
import { call, makeUser, STRONG } from '../daemon/accounts/http.js';
import { login, startServer, type TestServer } from '../helpers/server.js';

/**
 * public: no credentials needed. auth: any signed-in user (Use tools). own: a signed-in user's own
 * resource (files, pipelines, keys, jobs): other users get 404 (never a hint that it exists), admins
 * see it (See all users' files, pipelines, keys). admin: needs an admin permission (Write settings,
 * Manage users and teams, Manage branding, system:health, audit). session: a signed-in person with a
 * session, never an API key (changing the password or the second factor: a leaked key must not).
 * self: as own, but an admin is refused another person's (403): rotating a key hands the caller its new
 * secret, so a person's key is rotated by its owner only (an admin rotates service accounts' keys).
 */
type Access = 'public' | 'auth' | 'session' | 'own' | 'self' | 'admin';

const EXPECTED: Record<string, Access> = {
  'POST /api/auth/login': 'public',
  'POST /api/auth/logout': 'auth',
  'GET /api/auth/session': 'auth',
  'POST /api/auth/change-password': 'session',
  'GET /api/auth/users': 'admin',
  'POST /api/auth/register': 'admin',
  'POST /api/auth/users': 'admin',
  'PUT /api/auth/users/:id': 'admin',
  'POST /api/auth/users/:id/reset-password': 'admin',
  'DELETE /api/auth/users/:id': 'admin',
  'GET /api/v1/config/auth': 'public',
  'GET /api/auth/mfa': 'auth',
  'POST /api/auth/mfa/enroll': 'session',
  'POST /api/auth/mfa/verify': 'session',
  'POST /api/auth/mfa/complete': 'public',
  'POST /api/auth/mfa/disable': 'session',
  'POST /api/auth/users/:id/mfa/reset': 'admin',
  'GET /api/auth/oidc/login': 'public',
  'GET /api/auth/oidc/callback': 'public',
  'GET /api/auth/saml/metadata': 'public',
  'GET /api/auth/saml/login': 'public',
  'POST /api/auth/saml/callback': 'public',
  'POST /api/v1/api-keys': 'auth',
  'GET /api/v1/api-keys': 'auth',
  'DELETE /api/v1/api-keys/:id': 'own',
  'POST /api/v1/api-keys/:id/rotate': 'self',
  'GET /api/v1/health': 'public',
  'GET /api/v1/readyz': 'public',
  'GET /api/v1/admin/health': 'admin',
  'GET /api/v1/tools': 'auth',
  'GET /api/v1/openapi.yaml': 'public',
  'GET /llms.txt': 'public',
  'GET /llms-full.txt': 'public',
  'GET /api/docs': 'public',
  'GET /api/docs/static/index.html': 'public',
  'GET /api/docs/static/swagger-initializer.js': 'public',
  'GET /api/docs/json': 'public',
  'GET /api/docs/yaml': 'public',
  'GET /api/docs/static/*': 'public',
  'GET /api/v1/download/:jobId/:filename': 'own',
  'GET /api/v1/jobs': 'auth',
  'GET /api/v1/jobs/:jobId': 'own',
  'POST /api/v1/jobs/:jobId/cancel': 'own',
  'GET /api/v1/jobs/:jobId/progress': 'own',
  'POST /api/v1/files': 'auth',
  'GET /api/v1/files': 'auth',
  'GET /api/v1/files/usage': 'auth',
  'GET /api/v1/files/:id': 'own',
  'PATCH /api/v1/files/:id': 'own',
  'DELETE /api/v1/files/:id': 'own',
  'GET /api/v1/files/:id/versions': 'own',
  'POST /api/v1/files/:id/versions': 'own',
  'GET /api/v1/files/:id/download': 'own',
  'GET /api/v1/files/:id/versions/:version/download': 'own',
  'POST /api/v1/files/:id/versions/:version/restore': 'own',
  'DELETE /api/v1/files/:id/versions/:version': 'own',
  'POST /api/v1/pipelines': 'auth',
  'GET /api/v1/pipelines': 'auth',
  'POST /api/v1/pipelines/validate': 'auth',
  'POST /api/v1/pipelines/run': 'auth',
  'POST /api/v1/pipelines/batch': 'auth',
  'GET /api/v1/pipelines/:id': 'own',
  'PUT /api/v1/pipelines/:id': 'own',
  'PATCH /api/v1/pipelines/:id': 'own',
  'DELETE /api/v1/pipelines/:id': 'own',
  'POST /api/v1/pipelines/:id/run': 'own',
  'POST /api/v1/pipelines/:id/batch': 'own',
  // Settings: every user reads the part the UI needs (features, job TTL), admins the whole and write.
  'GET /api/v1/settings': 'auth',
  'PUT /api/v1/settings': 'admin',
  // Branding is shown on the sign-in page, before anyone is signed in.
  'GET /api/v1/branding': 'public',
  'PUT /api/v1/branding': 'admin',
  'GET /api/v1/branding/logo': 'public',
  'POST /api/v1/branding/logo': 'admin',
  'DELETE /api/v1/branding/logo': 'admin',
  'GET /api/v1/admin/audit': 'admin',
  // A user sees only its own team (no members); admins see and manage all.
  'GET /api/v1/teams': 'auth',
  'GET /api/v1/teams/:id': 'admin',
  'GET /api/v1/teams/:id/limits': 'admin',
  'PUT /api/v1/teams/:id/limits': 'admin',
  // The generic tool routes answer for sections and ids the catalog does not have.
  'POST /api/v1/tools/:section/:toolId': 'auth',
  'POST /api/v1/tools/:section/:toolId/batch': 'auth',
  'POST /api/v1/tools/image/passport-photo/analyze': 'auth',
  // The analysis it names must be the caller's own (another user's is 404), checked from the body.
  'POST /api/v1/tools/image/passport-photo/generate': 'auth',
  'POST /api/v1/teams': 'admin',
  'PUT /api/v1/teams/:id': 'admin',
  'DELETE /api/v1/teams/:id': 'admin',
  // MCP over HTTP: any signed-in user may use tools; sessions belong to the user who opened them.
  'POST /api/v1/mcp': 'auth',
  'GET /api/v1/mcp': 'auth',
  'DELETE /api/v1/mcp': 'auth',
  'GET /api/v1/admin/watch-folders': 'admin',
  'POST /api/v1/admin/watch-folders': 'admin',
  'GET /api/v1/admin/watch-folders/:id': 'admin',
  'DELETE /api/v1/admin/watch-folders/:id': 'admin',
  'GET /api/v1/admin/features': 'admin',
  'GET /api/v1/admin/features/:bundle': 'admin',
  'DELETE /api/v1/admin/features/:bundle': 'admin',
  'POST /api/v1/admin/features/:bundle/install': 'admin',
  'POST /api/v1/admin/tools/:toolId/features/install': 'admin',
  'POST /api/v1/admin/features/import': 'admin',
  // Admins, or a scraper holding METRICS_TOKEN (not set here).
  'GET /metrics': 'admin',
};

/** Tool and preset routes come from the catalog: one rule covers them (any signed-in user may use tools). */
const TOOL_ROUTE = /^POST \/api\/v1\/tools\/(image|video|audio|pdf|files)\/[a-z0-9-]+(\/batch)?$/;

function expected(key: string): Access | undefined {
  return EXPECTED[key] ?? (TOOL_ROUTE.test(key) ? 'auth' : undefined);
}

/** Bodies that pass validation, so a request on another user's resource reaches the ownership check. */
const BODIES: Record<string, unknown> = {
  'PATCH /api/v1/files/:id': { name: 'renamed.png' },
  'PUT /api/v1/pipelines/:id': { steps: [{ tool: 'resize', settings: { width: 5 } }] },
};

type Principal = 'anonymous' | 'expired key' | 'revoked key' | 'user' | 'API key' | 'other user' | 'admin';

interface Owned {
  id: string;
  jobId: string;
  filename: string;
  version: string;
}

describe('authorization matrix', () => {
  let s: TestServer;
  let alice: { id: string; token: string; password: string };
  let bob: { id: string; token: string };
  let aliceKey: string;
  let expiredKey: string;
  let revokedKey: string;
  let png: Buffer;

  before(async () => {
    s = await startServer();
    alice = await makeUser(s, 'alice');
    bob = await makeUser(s, 'bob');
    aliceKey = (await call(s, 'POST', '/api/v1/api-keys', { token: alice.token, body: { name: 'k' } })).json.key;
    const exp = await call(s, 'POST', '/api/v1/api-keys', { token: alice.token, body: { name: 'expiring', expiresInDays: 1 } });
    expiredKey = exp.json.key;
    // Expire it in the database before its first use (nothing is cached yet).
    await s.app.kiln.store.db
      .updateTable('api_keys')
      .set({ expires_at: Date.now() - 1000 })
      .where('id', '=', exp.json.id)
      .execute();
    const rev = await call(s, 'POST', '/api/v1/api-keys', { token: alice.token, body: { name: 'revoked' } });
    revokedKey = rev.json.key;
    // Used once (so a cache would hold it), then revoked.
    assert.equal((await call(s, 'GET', '/api/auth/session', { token: revokedKey })).status, 200);
    assert.equal((await call(s, 'DELETE', `/api/v1/api-keys/${rev.json.id}`, { token: alice.token })).status, 200);
    png = await sharp({ create: { width: 8, height: 6, channels: 3, background: '#c04020' } })
      .png()
      .toBuffer();
  });
  after(() => s?.close());

  const routes = () =>
    registeredRoutes(s.app)
      .filter((r) => r.method !== 'HEAD')
      .map((r) => `${r.method} ${r.url}`);

  it('every registered route has an entry in the expected table (a new route cannot be forgotten)', () => {
    const missing = routes().filter((k) => !expected(k));
    assert.deepEqual(missing, [], 'add these routes to EXPECTED in test/hardening/authorization.test.ts');
    const stale = Object.keys(EXPECTED).filter((k) => !routes().includes(k));
    assert.deepEqual(stale, [], 'these entries name routes that no longer exist');
    assert.ok(routes().filter((k) => TOOL_ROUTE.test(k)).length > 300, 'the tool routes are in the table');
  });

  /** A fresh resource of alice's for a route with parameters (so destructive calls do not spoil the next row). */
  async function owned(url: string): Promise<Owned> {
    const t = alice.token;
    if (url.startsWith('/api/v1/files')) {
      const form = new FormData();
      form.append('file', new File([new Uint8Array(png)], 'a.png'));
      const f = await call(s, 'POST', '/api/v1/files', { token: t, form });
      assert.equal(f.status, 201, JSON.stringify(f.json));
      const form2 = new FormData();
      form2.append('file', new File([new Uint8Array(png)], 'a.png'));
      assert.equal((await call(s, 'POST', `/api/v1/files/${f.json.id}/versions`, { token: t, form: form2 })).status, 201);
      return { id: f.json.id, jobId: '', filename: '', version: '1' };
    }
    if (url.startsWith('/api/v1/pipelines')) {
      const p = await call(s, 'POST', '/api/v1/pipelines', {
        token: t,
        body: { name: `p-${Math.random().toString(36).slice(2)}`, steps: [{ tool: 'resize', settings: { width: 4 } }] },
      });
      assert.equal(p.status, 201, JSON.stringify(p.json));
      return { id: p.json.id, jobId: '', filename: '', version: '' };
    }
    if (url.startsWith('/api/v1/api-keys')) {
      const k = await call(s, 'POST', '/api/v1/api-keys', { token: t, body: { name: 'fresh' } });
      return { id: k.json.id, jobId: '', filename: '', version: '' };
    }
    // Jobs and downloads: a finished resize of alice's.
    const form = new FormData();
    form.append('file', new File([new Uint8Array(png)], 'a.png'));
    form.append('settings', JSON.stringify({ width: 4 }));
    const r = await call(s, 'POST', '/api/v1/tools/image/resize', { token: t, form });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const filename = decodeURIComponent(String(r.json.downloadUrl).split('/').pop()!);
    return { id: '', jobId: r.json.jobId, filename, version: '' };
  }

  function fill(url: string, o: Owned | undefined): string {
    const v = (x: string) => encodeURIComponent(x || 'no-such-id');
    return url
      .replace(':jobId', v(o?.jobId ?? ''))
      .replace(':filename', v(o?.filename ?? ''))
      .replace(':version', v(o?.version ?? ''))
      .replace(':id', v(o?.id ?? ''))
      .replace('*', 'index.css');
  }

  /**
   * Sends the request; returns the status and, for 401/403, the error code (a 403 FEATURE_DISABLED from an
   * SSO route that is not configured is not an authorization answer). Progress streams are not read.
   */
  async function status(method: string, url: string, token: string | null, json: unknown): Promise<{ st: number; code?: string }> {
    const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
    let body: string | undefined;
    if (!['GET', 'DELETE'].includes(method)) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(json ?? {});
    }
    const res = await fetch(s.url + url, { method, headers, body, redirect: 'manual', signal: AbortSignal.timeout(15_000) });
    if (res.status !== 401 && res.status !== 403) {
      await res.body?.cancel();
      return { st: res.status };
    }
    const j = (await res.json()) as { error?: { code?: string } };
    return { st: res.status, code: j.error?.code };
  }

  async function tokenOf(p: Principal, key: string): Promise<string | null> {
    switch (p) {
      case 'anonymous':
        return null;
      case 'expired key':
        return expiredKey;
      case 'revoked key':
        return revokedKey;
      case 'API key':
        return aliceKey;
      // Logging out ends the session it is sent with: it gets a session of its own.
      case 'other user':
        return key === 'POST /api/auth/logout' ? login(s.url, 'bob', STRONG) : bob.token;
      case 'admin':
        return key === 'POST /api/auth/logout' ? login(s.url, 'admin', s.adminPassword) : s.token;
      case 'user':
        return key === 'POST /api/auth/logout' ? login(s.url, 'alice', alice.password) : alice.token;
    }
  }

  const PRINCIPALS: Principal[] = ['anonymous', 'expired key', 'revoked key', 'other user', 'API key', 'user', 'admin'];
  const denied = ({ st, code }: { st: number; code?: string }) => st === 401 || (st === 403 && code === 'FORBIDDEN');

  it('answers every route × principal as the permission table says', { timeout: 600_000 }, async () => {
    const problems: string[] = [];
    let checked = 0;
    for (const key of routes()) {
      const access = expected(key)!;
      const [method, url] = key.split(' ') as [string, string];
      for (const p of PRINCIPALS) {
        const token = await tokenOf(p, key);
        const stranger = p === 'anonymous' || p === 'expired key' || p === 'revoked key';
        // Only alice's own principals and those who may see her resources get a real one.
        const mine = access === 'own' || access === 'self';
        const o = mine && !stranger && url.includes(':') ? await owned(url) : undefined;
        const r = await status(method, fill(url, o), token, BODIES[key]);
        const st = r.st;
        checked++;
        let ok: boolean;
        let want: string;
        if (access === 'public') {
          ok = !denied(r);
          want = 'let in';
        } else if (stranger) {
          ok = st === 401;
          want = '401';
        } else if (access === 'session' && p === 'API key') {
          ok = st === 403 && r.code === 'FORBIDDEN';
          want = '403 (API keys refused)';
        } else if (access === 'admin') {
          ok = p === 'admin' ? !denied(r) : st === 403 && r.code === 'FORBIDDEN';
          want = p === 'admin' ? 'let in' : '403';
        } else if (mine && p === 'other user' && o) {
          ok = st === 404;
          want = "404 (another user's resource)";
        } else if (access === 'self' && p === 'admin' && o) {
          ok = st === 403 && r.code === 'FORBIDDEN';
          want = "403 (another person's, owner only)";
        } else if (mine && o) {
          ok = !denied(r) && st !== 404;
          want = 'let in, resource found';
        } else {
          ok = !denied(r);
          want = 'let in';
        }
        if (!ok) problems.push(`${key} as ${p}: ${st}${r.code ? ` ${r.code}` : ''}, expected ${want}`);
      }
    }
    assert.deepEqual(problems, []);
    assert.ok(checked > 3000, `${checked} requests`);
  });

  it('an API key of a user whose role is user gets a user’s rights, not more', async () => {
    assert.equal((await call(s, 'GET', '/api/v1/settings', { token: aliceKey })).json.settings.ssoDefaultRole, undefined);
    assert.equal((await call(s, 'GET', '/api/v1/settings')).json.settings.ssoDefaultRole, 'user');
  });
});
