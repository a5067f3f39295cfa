/** OpenAPI entries of the feature-bundle routes (/api/v1/admin/features…, tool installs). */
import { BUNDLE_IDS } from '../../src/ai/bundles/manifest.js';

type Json = Record<string, unknown>;

export const FEATURE_TAGS = ['features'];

const errors = (...codes: number[]) => Object.fromEntries(codes.map((c) => [String(c), { $ref: `#/components/responses/Error${c}` }]));
const json = (schema: Json, description = 'OK') => ({ description, content: { 'application/json': { schema } } });

const status: Json = {
  type: 'object',
  required: ['id', 'title', 'state', 'tools', 'runtimes'],
  properties: {
    id: { type: 'string', enum: [...BUNDLE_IDS] },
    title: { type: 'string' },
    state: {
      type: 'string',
      enum: ['missing', 'queued', 'installing', 'installed', 'damaged', 'failed', 'unavailable'],
      description: 'damaged: installed, but a file is gone or of another size on disk; installing again replaces it.',
    },
    version: { type: 'string', description: 'The version this kiln installs.' },
    downloadBytes: { type: 'integer', description: 'Bytes a fresh install downloads (runtimes included).' },
    installed: {
      type: 'object',
      properties: {
        version: { type: 'string' },
        bytes: { type: 'integer' },
        installedAt: { type: 'string', format: 'date-time' },
        via: { type: 'string', enum: ['download', 'import'] },
        current: { type: 'boolean', description: 'false: installed by another kiln version; install again.' },
      },
    },
    progress: {
      type: 'object',
      properties: { bytesDone: { type: 'integer' }, bytesTotal: { type: 'integer' }, stage: { type: 'string' } },
    },
    error: { type: 'object', properties: { message: { type: 'string' }, reason: { type: 'string' } } },
    damaged: {
      type: 'array',
      description: 'State damaged: each file not on disk at its installed size (found null: gone).',
      items: {
        type: 'object',
        properties: { name: { type: 'string' }, size: { type: 'integer' }, found: { type: ['integer', 'null'] } },
      },
    },
    licence: { type: 'string' },
    licenceNote: { type: 'string' },
    tools: { type: 'array', items: { type: 'string' } },
    runtimes: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' }, installed: { type: 'boolean' } } } },
    imports: {
      type: 'array',
      description: 'Files with no verifiable download, installed only from an imported archive; the bundle installs without them.',
      items: {
        type: 'object',
        properties: {
          file: { type: 'string' },
          state: { type: 'string', enum: ['installed', 'missing'] },
          usedBy: { type: 'array', items: { type: 'string' } },
          sha256: { type: 'string', description: 'Recorded at import.' },
          install: { type: 'string' },
        },
      },
    },
  },
};

const queued: Json = {
  type: 'object',
  required: ['queued', 'installed', 'features'],
  properties: {
    tool: { type: 'string' },
    queued: { type: 'array', items: { type: 'string' }, description: 'Bundles queued (or already queued) for install.' },
    installed: { type: 'array', items: { type: 'string' }, description: 'Bundles that were already installed: skipped.' },
    features: { type: 'array', items: status },
  },
};

const bundleParam = { name: 'bundle', in: 'path', required: true, schema: { type: 'string', enum: [...BUNDLE_IDS] } };

export function featurePaths(): Json {
  return {
    '/api/v1/admin/features': {
      get: {
        operationId: 'listFeatures',
        tags: FEATURE_TAGS,
        summary: 'Every feature bundle with its state, size, licence and tools (admin).',
        responses: { '200': json({ type: 'object', properties: { features: { type: 'array', items: status } } }), ...errors(401, 403) },
      },
    },
    '/api/v1/admin/features/{bundle}': {
      get: {
        operationId: 'getFeature',
        tags: FEATURE_TAGS,
        summary: 'One feature bundle and its state (admin).',
        parameters: [bundleParam],
        responses: { '200': json(status), ...errors(401, 403, 404) },
      },
      delete: {
        operationId: 'removeFeature',
        tags: FEATURE_TAGS,
        summary: 'Remove an installed bundle (a running install of it is stopped). Its tools answer FEATURE_NOT_INSTALLED again.',
        parameters: [bundleParam],
        responses: { '204': { description: 'Removed.' }, ...errors(401, 403, 404) },
      },
    },
    '/api/v1/admin/features/{bundle}/install': {
      post: {
        operationId: 'installFeature',
        tags: FEATURE_TAGS,
        summary: 'Queue the install of one bundle (skipped when installed). Installs run one at a time and survive a restart.',
        parameters: [bundleParam],
        responses: { '202': json(queued, 'Queued; follow it with GET /api/v1/admin/features/{bundle}.'), ...errors(401, 403, 404, 409) },
      },
    },
    '/api/v1/admin/tools/{toolId}/features/install': {
      post: {
        operationId: 'installToolFeatures',
        tags: FEATURE_TAGS,
        summary: 'Install every bundle the tool needs: installed ones are skipped, only missing ones are queued (one install at a time).',
        parameters: [{ name: 'toolId', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { '202': json(queued, 'Queued.'), ...errors(400, 401, 403, 404, 409) },
      },
    },
    '/api/v1/admin/features/import': {
      post: {
        operationId: 'importFeature',
        tags: FEATURE_TAGS,
        summary:
          'Air-gapped install: a bundle archive written by `kiln features export` in the field "archive", verified against the same pinned sizes and digests as a download.',
        requestBody: {
          required: true,
          content: {
            'multipart/form-data': {
              schema: { type: 'object', required: ['archive'], properties: { archive: { type: 'string', format: 'binary' } } },
            },
          },
        },
        responses: { '201': json(status, 'Installed.'), ...errors(400, 401, 403, 413, 415) },
      },
    },
  };
}
