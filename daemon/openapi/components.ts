/** The shared components of the OpenAPI document: error responses and the schemas routes refer to. */
import { ERROR_TABLE } from '../../src/core/errors.js';
import { ref } from './common.js';

type Json = Record<string, unknown>;

const ERROR_STATUSES = [...new Set(Object.values(ERROR_TABLE).map((v) => v.status))].sort();

export function errorResponseComponents(): Json {
  const out: Json = {};
  for (const status of ERROR_STATUSES) {
    const names = Object.entries(ERROR_TABLE)
      .filter(([, v]) => v.status === status)
      .map(([k]) => k);
    out[`Error${status}`] = { description: `Error: ${names.join(', ')}`, content: { 'application/json': { schema: ref('Error') } } };
  }
  return out;
}

/** Schemas named in several operations (Error, RunResult, Accepted, User, ApiKey, Job). */
export function schemas(): Json {
  const errorCodes = Object.keys(ERROR_TABLE);
  return {
    Error: {
      type: 'object',
      required: ['error'],
      properties: {
        error: {
          type: 'object',
          required: ['code', 'message'],
          properties: {
            code: { type: 'string', enum: errorCodes },
            message: { type: 'string' },
            details: { description: 'Per-field problems ({path, message}[]) or other detail.' },
            reason: { type: 'string', description: 'A finer machine-readable reason, e.g. session-expired.' },
          },
        },
      },
    },
    RunResult: {
      type: 'object',
      required: ['jobId', 'originalSize', 'processedSize'],
      properties: {
        jobId: { type: 'string' },
        downloadUrl: { type: 'string', description: '/api/v1/download/<jobId>/<filename>; absent for data-only results.' },
        originalSize: { type: 'integer', description: 'Bytes of the inputs.' },
        processedSize: { type: 'integer', description: 'Bytes of the output.' },
        data: { type: 'object', description: 'JSON data returned by the tool.' },
        savedFileId: { type: 'string' },
      },
    },
    Accepted: {
      type: 'object',
      required: ['jobId', 'async', 'statusUrl', 'eventsUrl'],
      properties: {
        jobId: { type: 'string' },
        async: { const: true },
        statusUrl: { type: 'string', description: 'GET it for the job (also in the Location header).' },
        eventsUrl: { type: 'string', description: 'Server-sent events of its progress.' },
      },
    },
    User: {
      type: 'object',
      properties: {
        id: { type: 'string' },
        username: { type: 'string' },
        role: { type: 'string', enum: ['admin', 'user'] },
        teamId: { type: ['string', 'null'] },
      },
    },
    ApiKey: {
      type: 'object',
      required: ['id', 'name', 'prefix', 'createdAt', 'lastUsedAt', 'expiresAt', 'expired'],
      properties: {
        id: { type: 'string' },
        name: { type: 'string' },
        prefix: { type: 'string', description: 'si_ and the first characters of the key.' },
        createdAt: { type: 'string', format: 'date-time' },
        lastUsedAt: { type: ['string', 'null'], format: 'date-time' },
        expiresAt: { type: ['string', 'null'], format: 'date-time' },
        expired: { type: 'boolean' },
        owner: {
          type: 'object',
          properties: { id: { type: 'string' }, username: { type: ['string', 'null'] } },
          description: 'Only with ?all=true.',
        },
      },
    },
    Job: {
      type: 'object',
      properties: {
        jobId: { type: 'string' },
        tool: { type: 'string' },
        baseTool: { type: 'string' },
        kind: { type: 'string', enum: ['run', 'batch'] },
        ownerId: { type: 'string' },
        status: { type: 'string', enum: ['queued', 'running', 'completed', 'failed', 'cancelled'] },
        progress: { type: 'object', properties: { percent: { type: 'integer' }, stage: { type: ['string', 'null'] } } },
        settings: { type: 'object' },
        clientJobId: { type: ['string', 'null'] },
        result: { oneOf: [ref('RunResult'), { type: 'null' }] },
        error: {
          oneOf: [
            {
              type: 'object',
              required: ['code', 'message'],
              properties: { code: { type: 'string' }, message: { type: 'string' }, details: {}, reason: { type: 'string' } },
            },
            { type: 'null' },
          ],
          description: 'Why a failed or cancelled job ended.',
        },
        outputName: { type: ['string', 'null'] },
        contentType: { type: ['string', 'null'] },
        originalSize: { type: ['integer', 'null'] },
        processedSize: { type: ['integer', 'null'] },
        createdAt: { type: 'string' },
        startedAt: { type: ['string', 'null'] },
        finishedAt: { type: ['string', 'null'] },
      },
    },
  };
}
