/** OIDC sign-in: GET /api/auth/oidc/login redirects to the provider, /callback signs the user in. */
import type { FastifyInstance } from 'fastify';
import { KilnError } from '../../src/core/errors.js';
import { finishOidc, startOidc, type OidcPending } from '../accounts/oidc.js';
import { cookie, finishSso, guardedSso, putSsoRequest, requireSso, ssoStartLimiter, takeSsoRequest } from '../accounts/sso.js';

const COOKIE = 'kiln_oidc_state';

export async function oidcRoutes(app: FastifyInstance): Promise<void> {
  const ctx = app.kiln;

  const starts = ssoStartLimiter('OIDC');
  app.get('/api/auth/oidc/login', { config: { public: true } }, async (request, reply) => {
    await requireSso(ctx, 'oidc');
    starts.check(request, reply);
    const c = ctx.config.accounts.oidc!;
    const { url, state, pending } = await startOidc(c);
    await putSsoRequest(ctx.store.db, 'oidc', state, pending);
    // Binds the round trip to this browser: a callback URL fed to someone else's browser (login CSRF) lacks the cookie.
    const secure = c.redirectUrl.startsWith('https:') ? '; Secure' : '';
    void reply.header('set-cookie', `${COOKIE}=${state}; Path=/api/auth/oidc; HttpOnly; SameSite=Lax; Max-Age=600${secure}`);
    return reply.redirect(url, 302);
  });

  app.get('/api/auth/oidc/callback', { config: { public: true } }, async (request, reply) => {
    await requireSso(ctx, 'oidc');
    const q = request.query as Record<string, string | undefined>;
    if (q.error)
      throw new KilnError(
        'UNAUTHORIZED',
        `The OIDC provider refused the sign-in: ${q.error}${q.error_description ? ` (${q.error_description})` : ''}.`,
        { reason: 'oidc-refused' },
      );
    const state = q.state;
    if (!state || !q.code) throw new KilnError('USAGE_ERROR', 'The callback needs the code and state parameters from the provider.');
    return guardedSso(ctx, request, reply, 'oidc', async () => {
      if (cookie(request.headers.cookie, COOKIE) !== state)
        throw new KilnError(
          'UNAUTHORIZED',
          'The sign-in was started in another browser or has expired: start again at /api/auth/oidc/login.',
          { reason: 'oidc-state-mismatch' },
        );
      const pending = await takeSsoRequest<OidcPending>(ctx.store.db, 'oidc', state);
      if (!pending)
        throw new KilnError('UNAUTHORIZED', 'Unknown, used or expired OIDC state: start again at /api/auth/oidc/login.', {
          reason: 'oidc-state-invalid',
        });
      void reply.header('set-cookie', `${COOKIE}=; Path=/api/auth/oidc; HttpOnly; SameSite=Lax; Max-Age=0`);
      const identity = await finishOidc(ctx.config.accounts.oidc!, request.url.slice(request.url.indexOf('?')), state, pending);
      return finishSso(ctx, request, reply, identity, ctx.config.accounts.oidc!.adminGroup);
    });
  });
}
