/** OpenAPI entries of /api/v1/admin/watch-folders, with the request schema taken from the route's zod body. */
import { z } from 'zod';
import { WatchFolderBody } from './store.js';

type Json = Record<string, unknown>;

export const WATCH_TAGS = ['watch-folders'];

const errors = (...codes: number[]) => Object.fromEntries(codes.map((c) => [String(c), { $ref: `#/components/responses/Error${c}` }]));

const folder: Json = {
  type: 'object',
  required: ['id', 'name', 'path', 'outputPath', 'pipeline', 'ownerId', 'recursive', 'keep', 'stableMs', 'status'],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    path: { type: 'string' },
    outputPath: { type: 'string' },
    pipeline: { type: 'object' },
    ownerId: { type: 'string' },
    recursive: { type: 'boolean' },
    keep: { type: 'boolean' },
    stableMs: { type: 'integer' },
    createdBy: { type: 'string' },
    createdAt: { type: 'string', format: 'date-time' },
    status: {
      type: 'object',
      description: 'On the instance that answers: whether it watches the folder now, and its counts since it started.',
      properties: {
        active: { type: 'boolean' },
        processed: { type: 'integer' },
        failed: { type: 'integer' },
        lastError: { type: 'string' },
      },
    },
  },
};

export function watchFolderPaths(): Json {
  const json = (schema: Json, description = 'OK') => ({ description, content: { 'application/json': { schema } } });
  const id = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
  const body = z.toJSONSchema(WatchFolderBody, { io: 'input' }) as Json;
  delete body.$schema;
  return {
    '/api/v1/admin/watch-folders': {
      get: {
        operationId: 'listWatchFolders',
        tags: WATCH_TAGS,
        summary: 'The watch folders (admin).',
        responses: { '200': json({ type: 'object', properties: { watchFolders: { type: 'array', items: folder } } }), ...errors(401, 403) },
      },
      post: {
        operationId: 'createWatchFolder',
        tags: WATCH_TAGS,
        summary:
          'Watch a server folder: every complete file runs the pipeline as a job of the owner; outputs go to outputPath, originals to .done/ or .failed/.',
        requestBody: { required: true, content: { 'application/json': { schema: body } } },
        responses: { '201': json(folder, 'Created; the folder is watched from now on.'), ...errors(400, 401, 403, 404, 409) },
      },
    },
    '/api/v1/admin/watch-folders/{id}': {
      get: {
        operationId: 'getWatchFolder',
        tags: WATCH_TAGS,
        summary: 'One watch folder and its status (admin).',
        parameters: [id],
        responses: { '200': json(folder), ...errors(401, 403, 404) },
      },
      delete: {
        operationId: 'deleteWatchFolder',
        tags: WATCH_TAGS,
        summary: 'Stop watching a folder (its files stay where they are; the job of a file in progress is cancelled).',
        parameters: [id],
        responses: { '204': { description: 'Deleted.' }, ...errors(401, 403, 404) },
      },
    },
  };
}
