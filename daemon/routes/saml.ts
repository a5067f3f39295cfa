/** SAML sign-in: SP metadata, the AuthnRequest redirect, and the assertion consumer service. */
import type { FastifyInstance } from 'fastify';
import { KilnError } from '../../src/core/errors.js';
import { finishSaml, samlFor } from '../accounts/saml.js';
import { finishSso, requireSso } from '../accounts/sso.js';

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

  app.get('/api/auth/saml/login', { config: { public: true } }, async (request, reply) => {
    await requireSso(ctx, 'saml');
    const saml = await samlFor(ctx.config.accounts.saml!, ctx.store.db);
    const relay = (request.query as { RelayState?: string }).RelayState ?? '';
    return reply.redirect(await saml.getAuthorizeUrlAsync(relay.slice(0, 80), undefined, {}), 302);
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
    const identity = await finishSaml(ctx.config.accounts.saml!, ctx.store.db, response);
    return finishSso(ctx, request, reply, identity, ctx.config.accounts.saml!.adminGroup);
  });
}
