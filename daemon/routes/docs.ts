/**
 * /api/v1/openapi.yaml, the interactive docs at /api/docs (served offline), /llms.txt, /llms-full.txt.
 * Each is built on its first request and kept: the document describes ~800 operations (138 ms and a few
 * MB to build), and an idle daemon that nobody reads the docs of should not hold it, nor the YAML writer.
 */
import type { FastifyInstance } from 'fastify';
import { pub } from '../openapi/common.js';
import { registeredRoutes, type RouteDoc } from '../openapi/route-doc.js';
import { swaggerUiRoutes } from '../openapi/swagger-ui.js';

export async function docsRoutes(app: FastifyInstance): Promise<void> {
  // Asked for only once the app serves requests: every route is registered by then (the fixed routes'
  // descriptions are their own schemas).
  const document = once(async () => (await import('../openapi/document.js')).openApiDocument(registeredRoutes(app)));
  const yamlText = once(async () => {
    const [{ stringify }, doc] = await Promise.all([import('yaml'), document()]);
    return stringify(doc, { aliasDuplicateObjects: false });
  });
  const llms = once(() => import('../openapi/llms.js'));
  app.get('/api/v1/openapi.yaml', { config: { public: true }, schema: OPENAPI_DOC }, async (_r, reply) =>
    reply.type('application/yaml; charset=utf-8').send(await yamlText()),
  );
  let short: string | undefined;
  let full: string | undefined;
  app.get('/llms.txt', { config: { public: true }, schema: LLMS_DOC }, async (_r, reply) =>
    reply.type('text/plain; charset=utf-8').send((short ??= (await llms()).llmsSummary())),
  );
  app.get('/llms-full.txt', { config: { public: true }, schema: LLMS_FULL_DOC }, async (_r, reply) =>
    reply.type('text/plain; charset=utf-8').send((full ??= (await llms()).llmsFull())),
  );
  await swaggerUiRoutes(app, document);
}

/** `make()` on the first call, its promise shared by every later one; a failure is not kept. */
function once<T>(make: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () =>
    (p ??= make().catch((e) => {
      p = undefined;
      throw e;
    }));
}

const OPENAPI_DOC: RouteDoc = {
  ...pub,
  operationId: 'openapi',
  tags: ['docs'],
  summary: 'This document.',
  response: { '200': { description: 'OpenAPI 3.1 YAML.', content: { 'application/yaml': { schema: { type: 'string' } } } } },
};

const LLMS_DOC: RouteDoc = {
  ...pub,
  operationId: 'llmsTxt',
  tags: ['docs'],
  summary: 'A short text summary of the API for language models.',
  response: { '200': { description: 'Text.', content: { 'text/plain': { schema: { type: 'string' } } } } },
};

const LLMS_FULL_DOC: RouteDoc = {
  ...pub,
  operationId: 'llmsFullTxt',
  tags: ['docs'],
  summary: 'Every tool with its settings, as text.',
  response: { '200': { description: 'Text.', content: { 'text/plain': { schema: { type: 'string' } } } } },
};
