/** /api/v1/openapi.yaml, the interactive docs at /api/docs (served offline), /llms.txt, /llms-full.txt. */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { stringify } from 'yaml';
import { openApiDocument } from '../openapi/document.js';
import { llmsFull, llmsSummary } from '../openapi/llms.js';

export async function docsRoutes(app: FastifyInstance): Promise<void> {
  let yamlText: string | undefined;
  let short: string | undefined;
  let full: string | undefined;
  app.get('/api/v1/openapi.yaml', { config: { public: true } }, async (_r, reply) =>
    reply.type('application/yaml; charset=utf-8').send((yamlText ??= stringify(openApiDocument(), { aliasDuplicateObjects: false }))),
  );
  app.get('/llms.txt', { config: { public: true } }, async (_r, reply) =>
    reply.type('text/plain; charset=utf-8').send((short ??= llmsSummary())),
  );
  app.get('/llms-full.txt', { config: { public: true } }, async (_r, reply) =>
    reply.type('text/plain; charset=utf-8').send((full ??= llmsFull())),
  );

  // The UI reads the same generated document; its assets come from the package, not a CDN.
  await app.register(swagger, { mode: 'static', specification: { document: openApiDocument() as never } });
  await app.register(swaggerUi, { routePrefix: '/api/docs', uiConfig: { docExpansion: 'none', deepLinking: true, validatorUrl: null } });
}
