/**
 * The interactive docs at /api/docs (Swagger UI, its assets served from the package, not a CDN), loaded
 * on the first visit. @fastify/swagger-ui brings @fastify/static, glob, yaml and its own routes: ~1 MB
 * of code an idle daemon never needed. A fastify plugin cannot be registered once the app is listening,
 * so the daemon registers the plugin's routes itself, and on the first request builds a small inner
 * app holding the plugin and forwards every docs request to it (`inject`, in memory).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, InjectOptions } from 'fastify';

/** The routes @fastify/swagger-ui registers under its prefix (the same paths, so links and tests hold). */
const UI_ROUTES = ['/', '/static/index.html', '/static/swagger-initializer.js', '/json', '/yaml', '/static/*'];

/** Headers of the inner answer that describe its transport, set again by the outer reply. */
const HOP_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'date']);

export const DOCS_PREFIX = '/api/docs';

/** `document()` gives the OpenAPI document when the UI first needs it. */
export async function swaggerUiRoutes(app: FastifyInstance, document: () => Promise<Record<string, unknown>>): Promise<void> {
  let inner: Promise<FastifyInstance> | undefined;
  const build = async (): Promise<FastifyInstance> => {
    const [{ default: Fastify }, { default: swagger }, { default: swaggerUi }] = await Promise.all([
      import('fastify'),
      import('@fastify/swagger'),
      import('@fastify/swagger-ui'),
    ]);
    const ui = Fastify();
    await ui.register(swagger, { mode: 'static', specification: { document: (await document()) as never } });
    await ui.register(swaggerUi, { routePrefix: DOCS_PREFIX, uiConfig: { docExpansion: 'none', deepLinking: true, validatorUrl: null } });
    await ui.ready();
    return ui;
  };
  const forward = async (request: FastifyRequest, reply: FastifyReply) => {
    // A failed build is not kept: the next visit tries again.
    inner ??= build().catch((e) => {
      inner = undefined;
      throw e;
    });
    const res = await (await inner).inject({
      method: request.method as InjectOptions['method'],
      url: request.url,
      headers: { ...request.headers },
    });
    for (const [name, value] of Object.entries(res.headers)) if (value !== undefined && !HOP_HEADERS.has(name)) reply.header(name, value);
    reply.code(res.statusCode);
    // Without a body (a redirect, 304) nothing is sent, as the plugin itself would not (no content type).
    return res.rawPayload.length ? reply.send(res.rawPayload) : reply.send();
  };
  app.addHook('onClose', async () => {
    if (inner) await (await inner.catch(() => undefined))?.close();
  });
  await app.register(
    async (docs) => {
      for (const url of UI_ROUTES) docs.get(url, { config: { public: true } }, forward);
    },
    { prefix: DOCS_PREFIX },
  );
}
