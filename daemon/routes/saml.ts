/** SAML sign-in: SP metadata, the AuthnRequest redirect, and the assertion consumer service. */
import type { FastifyInstance } from 'fastify';
import { KilnError } from '../../src/core/errors.js';
import { finishSaml, samlFor, startSaml, takeBinding } from '../accounts/saml.js';
import { cookie, finishSso, guardedSso, requireSso, ssoStartLimiter } from '../accounts/sso.js';

const COOKIE = 'kiln_saml_state';

export async function samlRoutes(app: FastifyInstance): Promise<void> {
  const ctx = app.kiln;

  // The IdP posts the response as an HTML form; this parser only applies to this plugin's routes.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 1024 * 1024 }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });

  app.get('/api/auth/saml/metadata', { config: { public: true } }, async (_request, reply) => {
    await requireSso(ctx, 'saml');
    const saml = await samlFor(ctx.config.accounts.saml!, ctx.store.db);
    return reply.type('application/samlmetadata+xml; charset=utf-8').send(saml.generateServiceProviderMetadata(null, null));
  });

  const starts = ssoStartLimiter('SAML');
  app.get('/api/auth/saml/login', { config: { public: true } }, async (request, reply) => {
    await requireSso(ctx, 'saml');
    starts.check(request, reply);
    const c = ctx.config.accounts.saml!;
    const { url, binding } = await startSaml(c, ctx.store.db);
    // Binds the round trip to this browser. The IdP posts back cross-site, which a SameSite=Lax cookie
    // would not survive: over https the cookie is SameSite=None; Secure. Over plain http (a local IdP on
    // the same site only) browsers refuse SameSite=None without Secure, so it stays Lax there.
    const attrs = c.callbackUrl.startsWith('https:') ? 'SameSite=None; Secure' : 'SameSite=Lax';
    void reply.header('set-cookie', `${COOKIE}=${binding}; Path=/api/auth/saml; HttpOnly; ${attrs}; Max-Age=600`);
    return reply.redirect(url, 302);
  });

  app.post('/api/auth/saml/callback', { config: { public: true } }, async (request, reply) => {
    await requireSso(ctx, 'saml');
    const body = request.body as Record<string, unknown> | undefined;
    const response = body?.SAMLResponse;
    if (typeof response !== 'string' || !response)
      throw new KilnError(
        'USAGE_ERROR',
        'Post the form field SAMLResponse (application/x-www-form-urlencoded) from the identity provider.',
      );
    return guardedSso(ctx, request, reply, 'saml', async () => {
      const requestId = await takeBinding(ctx.store.db, body?.RelayState, cookie(request.headers.cookie, COOKIE));
      void reply.header('set-cookie', `${COOKIE}=; Path=/api/auth/saml; HttpOnly; Max-Age=0`);
      const identity = await finishSaml(ctx.config.accounts.saml!, ctx.store.db, response, requestId);
      return finishSso(ctx, request, reply, identity, ctx.config.accounts.saml!.adminGroup);
    });
  });
}
