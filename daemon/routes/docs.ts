/** /api/v1/openapi.yaml, the interactive docs at /api/docs (served offline), /llms.txt, /llms-full.txt. */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { stringify } from 'yaml';
import { openApiDocument } from '../openapi/document.js';
import { llmsFull, llmsSummary } from '../openapi/llms.js';
import { pub } from '../openapi/common.js';
import { registeredRoutes, type RouteDoc } from '../openapi/route-doc.js';

export async function docsRoutes(app: FastifyInstance): Promise<void> {
  let yamlText: string | undefined;
  let short: string | undefined;
  let full: string | undefined;
  // Built once every route is registered: the fixed routes' descriptions are their own schemas.
  const document: Record<string, unknown> = {};
  app.addHook('onReady', async () => {
    Object.assign(document, openApiDocument(registeredRoutes(app)));
  });
  app.get('/api/v1/openapi.yaml', { config: { public: true }, schema: OPENAPI_DOC }, async (_r, reply) =>
    reply.type('application/yaml; charset=utf-8').send((yamlText ??= stringify(document, { aliasDuplicateObjects: false }))),
  );
  app.get('/llms.txt', { config: { public: true }, schema: LLMS_DOC }, async (_r, reply) =>
    reply.type('text/plain; charset=utf-8').send((short ??= llmsSummary())),
  );
  app.get('/llms-full.txt', { config: { public: true }, schema: LLMS_FULL_DOC }, async (_r, reply) =>
    reply.type('text/plain; charset=utf-8').send((full ??= llmsFull())),
  );

  // The UI reads the same document; its assets come from the package, not a CDN.
  await app.register(swagger, { mode: 'static', specification: { document: document as never } });
  await app.register(swaggerUi, { routePrefix: '/api/docs', uiConfig: { docExpansion: 'none', deepLinking: true, validatorUrl: null } });
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
