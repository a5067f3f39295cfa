/**
 * The OpenAPI 3.1 document, generated from the catalog (every tool, preset and batch route with its
 * settings JSON Schema) and the fixed routes of the daemon. Served as YAML and read by /api/docs.
 */
import { ERROR_TABLE } from '../../src/core/errors.js';
import { settingsJsonSchema } from '../../src/core/settings.js';
import { GROUP_TITLES, SECTIONS, type ExtraInput } from '../../src/core/tool.js';
import { VERSION } from '../../src/core/version.js';
import { routeOf, targets, type Target } from '../jobs/targets.js';
import { ACCOUNT_TAGS, accountPaths } from '../accounts/openapi.js';
import { LIBRARY_TAGS, libraryPaths } from '../library/openapi.js';
import { passportPhotoPaths } from '../routes/passport-photo.js';
import { WATCH_TAGS, watchFolderPaths } from '../watch/openapi.js';
import { ACCEPTED, PREFER, metricsPaths } from './common.js';
import { MCP_TAGS, mcpPaths } from './mcp.js';

type Json = Record<string, unknown>;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const binary = { type: 'string', format: 'binary' };

function pascal(id: string): string {
  return id.replace(/(^|-)([a-z0-9])/g, (_m, _d, c: string) => c.toUpperCase());
}

function camel(id: string): string {
  const p = pascal(id);
  return p[0]!.toLowerCase() + p.slice(1);
}

/** Moves a schema's `$defs` into components so its `#/$defs/...` references resolve in the document. */
function hoist(name: string, schema: Json, components: Json): Json {
  const defs = schema.$defs as Record<string, Json> | undefined;
  const rewrite = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(rewrite);
    if (v && typeof v === 'object') {
      return Object.fromEntries(
        Object.entries(v as Json)
          .filter(([k]) => k !== '$defs' && k !== '$schema' && k !== '$id')
          .map(([k, x]) => [
            k,
            k === '$ref' && typeof x === 'string' && x.startsWith('#/$defs/') ? `#/components/schemas/${name}_${x.slice(8)}` : rewrite(x),
          ]),
      );
    }
    return v;
  };
  for (const [k, d] of Object.entries(defs ?? {})) components[`${name}_${k}`] = rewrite(d);
  return rewrite(schema) as Json;
}

const ERROR_STATUSES = [...new Set(Object.values(ERROR_TABLE).map((v) => v.status))].sort();

function errorResponseComponents(): Json {
  const out: Json = {};
  for (const status of ERROR_STATUSES) {
    const names = Object.entries(ERROR_TABLE)
      .filter(([, v]) => v.status === status)
      .map(([k]) => k);
    out[`Error${status}`] = { description: `Error: ${names.join(', ')}`, content: { 'application/json': { schema: ref('Error') } } };
  }
  return out;
}

function errorResponses(codes: number[]): Json {
  return Object.fromEntries(codes.map((status) => [String(status), { $ref: `#/components/responses/Error${status}` }]));
}

function extraProps(extra: ExtraInput[] | undefined): { props: Json; notes: string[] } {
  const props: Json = {};
  const notes: string[] = [];
  for (const x of extra ?? []) {
    if (x.field === 'file') {
      notes.push(`A second \`file\` part is the ${x.description}${x.required ? ' (required)' : ''}.`);
      continue;
    }
    const d = `${x.description}. Accepts ${x.accept.join(', ')}.${x.required ? ' Required.' : ''}`;
    if (x.indexed) {
      for (const i of [0, 1]) props[`${x.field}${i}`] = { ...binary, description: `${d} Indexed: ${x.field}0, ${x.field}1, …` };
    } else {
      props[x.field] = { ...binary, description: d };
    }
  }
  return { props, notes };
}

function runOperation(t: Target, settingsRef: Json): Json {
  const input = t.tool.input;
  const { props, notes } = extraProps(input.extra);
  const common = {
    settings: { ...settingsRef, description: 'Tool settings as a JSON object string. Other plain text fields are merged in as settings.' },
    clientJobId: { type: 'string', maxLength: 200, description: 'Caller-chosen id to correlate progress.' },
    fileId: { type: 'string', description: 'Existing library item: the output is saved as a new version of it.' },
  };
  const multipartProps: Json =
    input.kind === 'file'
      ? { file: { ...binary, description: `The input (${input.accept.join(', ')}).` }, ...props, ...common }
      : input.kind === 'files'
        ? {
            file: {
              type: 'array',
              items: binary,
              minItems: input.min,
              maxItems: input.max,
              description: `Repeated \`file\` parts, ${input.min}-${input.max} files (${input.accept.join(', ')}).`,
            },
            ...props,
            ...common,
          }
        : { ...props, ...common };
  const required = input.kind === 'none' ? [] : ['file'];
  const content: Json = {
    'multipart/form-data': {
      schema: { type: 'object', properties: multipartProps, ...(required.length ? { required } : {}) },
      encoding: { settings: { contentType: 'application/json' } },
    },
  };
  if (input.kind === 'none') content['application/json'] = { schema: settingsRef };
  const preset = t.preset;
  const description = [
    preset
      ? `Preset: runs \`${t.tool.id}\` with ${JSON.stringify(preset.fixed)} fixed; takes ${preset.accept.join(', ')} (checked from the bytes, 415 otherwise).`
      : (t.tool.description ?? t.tool.summary),
    `Output: ${preset ? preset.outputExtension : t.tool.output}.`,
    ...notes,
  ].join('\n\n');
  return {
    operationId: camel(t.id),
    tags: [t.section],
    summary: preset ? `${t.id}: ${t.tool.summary}` : t.tool.summary,
    description,
    parameters: [PREFER],
    requestBody: { required: input.kind !== 'none', content },
    responses: {
      '200': { description: 'Finished inside the synchronous window.', content: { 'application/json': { schema: ref('RunResult') } } },
      '202': ACCEPTED,
      ...errorResponses([400, 401, 403, 404, 409, 413, 415, 499, 500, 501, 503, 504]),
    },
  };
}

function batchOperation(t: Target, settingsRef: Json): Json {
  return {
    operationId: camel(t.id) + 'Batch',
    tags: [t.section],
    summary: `Batch ${t.id}: one ZIP for many inputs.`,
    description:
      'Each input runs as its own run; the ZIP streams out as outputs finish and ends with manifest.json (every input with its output name or its error).',
    requestBody: {
      required: true,
      content: {
        'multipart/form-data': {
          schema: {
            type: 'object',
            required: ['files'],
            properties: {
              files: { type: 'array', items: binary, description: 'Repeated `files` parts.' },
              settings: { ...settingsRef, description: 'Settings for every input, as a JSON object string.' },
            },
          },
          encoding: { settings: { contentType: 'application/json' } },
        },
      },
    },
    responses: {
      '200': {
        description: 'A ZIP archive streamed as the runs finish.',
        headers: { 'X-Job-Id': { description: 'The batch job id.', schema: { type: 'string' } } },
        content: { 'application/zip': { schema: binary } },
      },
      ...errorResponses([400, 401, 403, 404, 413]),
    },
  };
}

const json = (schema: Json, description = 'OK') => ({ description, content: { 'application/json': { schema } } });
const pub = { security: [] as unknown[] };

const okBody = { type: 'object', required: ['ok'], properties: { ok: { const: true } } };
const sectionParam = { name: 'section', in: 'path', required: true, schema: { type: 'string' } };
const toolIdParam = { name: 'toolId', in: 'path', required: true, schema: { type: 'string' } };
/** One check of /readyz and /admin/health: {ok, error?} (admin/health adds what the check measured). */
const check = { type: 'object', required: ['ok'], properties: { ok: { type: 'boolean' }, error: { type: 'string' } } };
const readiness = {
  type: 'object',
  required: ['status', 'checks'],
  properties: {
    status: { type: 'string', enum: ['ready', 'not-ready'] },
    draining: { const: true, description: 'Present while the instance shuts down (SIGTERM): it takes no new work.' },
    checks: {
      type: 'object',
      required: ['database', 'queue', 'disk'],
      properties: {
        database: check,
        queue: check,
        // Public: ok/not ok only; the figures are on /api/v1/admin/health.
        disk: check,
      },
    },
  },
};
const adminHealth = {
  type: 'object',
  required: ['status', 'version', 'uptimeSeconds', 'storage', 'database', 'queue', 'authEnabled', 'node'],
  properties: {
    status: { type: 'string', enum: ['healthy', 'unhealthy'] },
    version: { type: 'string' },
    uptimeSeconds: { type: 'integer' },
    storage: {
      type: 'object',
      properties: {
        mode: { const: 'local' },
        dataDir: { type: 'string' },
        sharedDir: { type: 'string' },
        ok: { type: 'boolean' },
        freeBytes: { type: 'integer' },
        totalBytes: { type: 'integer' },
        error: { type: 'string' },
      },
    },
    database: {
      type: 'object',
      properties: { kind: { type: 'string', enum: ['sqlite', 'postgres'] }, ok: { type: 'boolean' }, error: { type: 'string' } },
    },
    queue: { type: 'object', description: 'Local queue state (running, waiting, concurrency) and, with Redis, the shared counts.' },
    gpu: { description: 'Detected GPU acceleration, if any.' },
    authEnabled: { type: 'boolean' },
    node: { type: 'string' },
    memory: { type: 'object', properties: { rssBytes: { type: 'integer' } } },
  },
};

function catalogSchema(): Json {
  const route = { type: 'string' };
  const batchRoute = { type: ['string', 'null'] };
  return {
    type: 'object',
    required: ['tools', 'presets'],
    properties: {
      tools: {
        type: 'array',
        items: {
          type: 'object',
          required: ['id', 'section', 'group', 'summary', 'route', 'batchRoute', 'input', 'output', 'execution', 'settings'],
          properties: {
            id: { type: 'string' },
            section: { type: 'string', enum: [...SECTIONS] },
            group: { type: 'string' },
            groupTitle: { type: 'string' },
            summary: { type: 'string' },
            description: { type: 'string' },
            route,
            batchRoute,
            input: { type: 'object', description: 'kind (file, files, none), accepted types, counts and extra inputs.' },
            output: { type: 'string' },
            execution: { type: 'string' },
            settings: { type: 'array', items: { type: 'object' }, description: 'Each setting with its name, type, range and default.' },
          },
        },
      },
      presets: {
        type: 'array',
        items: {
          type: 'object',
          required: ['id', 'section', 'tool', 'fixed', 'accept', 'outputExtension', 'route', 'batchRoute'],
          properties: {
            id: { type: 'string' },
            section: { type: 'string', enum: [...SECTIONS] },
            tool: { type: 'string' },
            fixed: { type: 'object' },
            accept: { type: 'array', items: { type: 'string' } },
            outputExtension: { type: 'string' },
            optional: {},
            route,
            batchRoute,
          },
        },
      },
    },
  };
}

function fixedPaths(): Json {
  const jobId = { name: 'jobId', in: 'path', required: true, schema: { type: 'string' } };
  return {
    '/api/auth/login': {
      post: {
        ...pub,
        operationId: 'login',
        tags: ['auth'],
        summary: 'Log in and get a session token.',
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['username', 'password'],
                properties: { username: { type: 'string' }, password: { type: 'string' } },
              },
            },
          },
        },
        responses: {
          '200': json(
            {
              oneOf: [
                {
                  type: 'object',
                  required: ['token', 'expiresAt', 'user'],
                  properties: { token: { type: 'string' }, expiresAt: { type: 'string', format: 'date-time' }, user: ref('User') },
                },
                {
                  type: 'object',
                  required: ['requiresMfa', 'mfaToken'],
                  properties: {
                    requiresMfa: { const: true },
                    mfaToken: { type: 'string', description: 'Send it with a code to POST /api/auth/mfa/complete.' },
                  },
                },
              ],
            },
            'A session, or (MFA enabled) a challenge to complete.',
          ),
          ...errorResponses([400, 401, 429]),
        },
      },
    },
    '/api/auth/logout': {
      post: {
        operationId: 'logout',
        tags: ['auth'],
        summary: 'End the current session.',
        responses: { '200': json(okBody), ...errorResponses([401]) },
      },
    },
    '/api/auth/session': {
      get: {
        operationId: 'session',
        tags: ['auth'],
        summary: 'Who is signed in.',
        responses: {
          '200': json({
            type: 'object',
            required: ['user', 'via'],
            properties: { user: ref('User'), via: { type: 'string', enum: ['session', 'api-key', 'open'] } },
          }),
          ...errorResponses([401]),
        },
      },
    },
    '/api/v1/config/auth': {
      get: {
        ...pub,
        operationId: 'authConfig',
        tags: ['auth'],
        summary: 'Whether authentication is enforced.',
        responses: { '200': json({ type: 'object', required: ['authEnabled'], properties: { authEnabled: { type: 'boolean' } } }) },
      },
    },
    '/api/v1/api-keys': {
      post: {
        operationId: 'createApiKey',
        tags: ['api-keys'],
        summary: 'Create an API key (shown once).',
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['name'],
                properties: {
                  name: { type: 'string', maxLength: 200 },
                  expiresInDays: {
                    type: 'number',
                    exclusiveMinimum: 0,
                    description: 'Lifetime in days (not with expiresAt). Without either the key does not expire.',
                  },
                  expiresAt: { type: 'string', format: 'date-time', description: 'A future expiry (not with expiresInDays).' },
                },
              },
            },
          },
        },
        responses: {
          '201': json(
            {
              type: 'object',
              required: ['id', 'name', 'key', 'expiresAt'],
              properties: {
                id: { type: 'string' },
                name: { type: 'string' },
                key: { type: 'string', pattern: '^si_[0-9a-f]{96}$' },
                expiresAt: { type: ['string', 'null'], format: 'date-time' },
              },
            },
            'Created',
          ),
          ...errorResponses([400, 401]),
        },
      },
      get: {
        operationId: 'listApiKeys',
        tags: ['api-keys'],
        summary: 'Your API keys, newest first (never the key itself).',
        parameters: [
          {
            name: 'all',
            in: 'query',
            schema: { type: 'string', enum: ['true'] },
            description: 'With keys:all: every user’s keys, each with its owner.',
          },
        ],
        responses: {
          '200': json({ type: 'object', required: ['keys'], properties: { keys: { type: 'array', items: ref('ApiKey') } } }),
          ...errorResponses([401]),
        },
      },
    },
    '/api/v1/api-keys/{id}': {
      delete: {
        operationId: 'deleteApiKey',
        tags: ['api-keys'],
        summary: 'Revoke an API key (yours; with keys:all: anyone’s).',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { '200': json(okBody), ...errorResponses([401, 404]) },
      },
    },
    '/api/v1/jobs': {
      get: {
        operationId: 'listJobs',
        tags: ['jobs'],
        summary: 'Your jobs, newest first (admins: all jobs).',
        parameters: [
          { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 500, default: 50 } },
          { name: 'offset', in: 'query', schema: { type: 'integer', minimum: 0, default: 0 } },
          { name: 'status', in: 'query', schema: { type: 'string', enum: ['queued', 'running', 'completed', 'failed', 'cancelled'] } },
          { name: 'clientJobId', in: 'query', schema: { type: 'string' }, description: 'Only the jobs started with this clientJobId.' },
        ],
        responses: {
          '200': json({
            type: 'object',
            required: ['jobs', 'limit', 'offset'],
            properties: { jobs: { type: 'array', items: ref('Job') }, limit: { type: 'integer' }, offset: { type: 'integer' } },
          }),
          ...errorResponses([400, 401]),
        },
      },
    },
    '/api/v1/jobs/{jobId}': {
      get: {
        operationId: 'getJob',
        tags: ['jobs'],
        summary: 'The state of a job.',
        parameters: [jobId],
        responses: { '200': json(ref('Job')), ...errorResponses([401, 404]) },
      },
    },
    '/api/v1/jobs/{jobId}/cancel': {
      post: {
        operationId: 'cancelJob',
        tags: ['jobs'],
        summary: 'Cancel a queued or running job.',
        parameters: [jobId],
        responses: { '200': json(ref('Job')), ...errorResponses([401, 404, 409]) },
      },
    },
    '/api/v1/jobs/{jobId}/progress': {
      get: {
        operationId: 'jobProgress',
        tags: ['jobs'],
        summary: 'Progress as server-sent events.',
        description:
          'Events carry ids. `progress` {percent, stage}; the stream ends with `completed` (the run result) or `failed` (an error body). A comment line is sent every 15 s. A client connecting after the end gets the final event at once.',
        parameters: [jobId],
        responses: {
          '200': { description: 'An event stream.', content: { 'text/event-stream': { schema: { type: 'string' } } } },
          ...errorResponses([401, 404]),
        },
      },
    },
    '/api/v1/download/{jobId}/{filename}': {
      get: {
        operationId: 'download',
        tags: ['jobs'],
        summary: "A finished job's output (owner or admin).",
        parameters: [
          jobId,
          { name: 'filename', in: 'path', required: true, schema: { type: 'string' } },
          { name: 'Range', in: 'header', schema: { type: 'string' }, description: 'bytes=start-end' },
        ],
        responses: {
          '200': {
            description: 'The file, with its content type and Content-Disposition.',
            content: { 'application/octet-stream': { schema: binary } },
          },
          '206': { description: 'The requested byte range.', content: { 'application/octet-stream': { schema: binary } } },
          '416': { description: 'The range does not fit the file.', content: { 'application/json': { schema: ref('Error') } } },
          ...errorResponses([401, 404, 409]),
        },
      },
    },
    '/api/v1/tools': {
      get: {
        operationId: 'listTools',
        tags: ['catalog'],
        summary: 'The catalog: tools and presets with routes and settings.',
        responses: { '200': json(catalogSchema()), ...errorResponses([401]) },
      },
    },
    '/api/v1/tools/{section}/{toolId}': {
      post: {
        operationId: 'misroutedTool',
        tags: ['catalog'],
        summary: 'Any other tool route: 404 that names the right route.',
        description:
          'Only reached for an unknown tool or preset, or one asked for under the wrong section; the error details carry the right `route` when there is one.',
        parameters: [sectionParam, toolIdParam],
        responses: errorResponses([401, 404]),
      },
    },
    '/api/v1/tools/{section}/{toolId}/batch': {
      post: {
        operationId: 'misroutedBatch',
        tags: ['catalog'],
        summary: 'Any other batch route: 404 that says why (no batch for this tool, or the right route).',
        parameters: [sectionParam, toolIdParam],
        responses: errorResponses([401, 404]),
      },
    },
    '/api/v1/health': {
      get: {
        ...pub,
        operationId: 'health',
        tags: ['health'],
        summary: 'Liveness: the database answers.',
        responses: {
          '200': json({
            type: 'object',
            required: ['status', 'version'],
            properties: { status: { const: 'healthy' }, version: { type: 'string' } },
          }),
          '503': json(
            {
              type: 'object',
              required: ['status', 'version', 'database'],
              properties: { status: { const: 'unhealthy' }, version: { type: 'string' }, database: check },
            },
            'The database is unreachable.',
          ),
        },
      },
    },
    '/api/v1/readyz': {
      get: {
        ...pub,
        operationId: 'readyz',
        tags: ['health'],
        summary: 'Readiness: database, queue and disk space.',
        responses: { '200': json(readiness, 'Ready.'), '503': json(readiness, 'Not ready: the failing check says why.') },
      },
    },
    '/api/v1/admin/health': {
      get: {
        operationId: 'adminHealth',
        tags: ['health'],
        summary: 'Diagnostics (permission system:health).',
        responses: { '200': json(adminHealth), ...errorResponses([401, 403]) },
      },
    },
    '/api/docs': {
      get: {
        ...pub,
        operationId: 'docsUi',
        tags: ['docs'],
        summary: 'The interactive API docs (Swagger UI, served offline) for this document.',
        responses: { '200': { description: 'HTML page.', content: { 'text/html': { schema: { type: 'string' } } } } },
      },
    },
    '/api/v1/openapi.yaml': {
      get: {
        ...pub,
        operationId: 'openapi',
        tags: ['docs'],
        summary: 'This document.',
        responses: { '200': { description: 'OpenAPI 3.1 YAML.', content: { 'application/yaml': { schema: { type: 'string' } } } } },
      },
    },
    '/llms.txt': {
      get: {
        ...pub,
        operationId: 'llmsTxt',
        tags: ['docs'],
        summary: 'A short text summary of the API for language models.',
        responses: { '200': { description: 'Text.', content: { 'text/plain': { schema: { type: 'string' } } } } },
      },
    },
    '/llms-full.txt': {
      get: {
        ...pub,
        operationId: 'llmsFullTxt',
        tags: ['docs'],
        summary: 'Every tool with its settings, as text.',
        responses: { '200': { description: 'Text.', content: { 'text/plain': { schema: { type: 'string' } } } } },
      },
    },
  };
}

function schemas(): Json {
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

let cached: Json | undefined;

export function openApiDocument(): Json {
  if (cached) return cached;
  const components: Json = schemas();
  const paths: Json = {
    ...fixedPaths(),
    ...accountPaths(),
    ...libraryPaths(),
    ...mcpPaths(),
    ...watchFolderPaths(),
    ...metricsPaths(),
    ...passportPhotoPaths(),
  };
  for (const t of targets()) {
    const name = `${pascal(t.tool.id)}Settings`;
    if (!components[name]) components[name] = hoist(name, settingsJsonSchema(t.tool) as Json, components);
    const settingsRef = ref(name);
    paths[routeOf(t)] = { post: runOperation(t, settingsRef) };
    if (t.batchable) paths[routeOf(t) + '/batch'] = { post: batchOperation(t, settingsRef) };
  }
  cached = {
    openapi: '3.1.0',
    info: {
      title: 'kiln',
      version: VERSION,
      description:
        'Process images, video, audio and documents with named tools. Run a tool with a multipart POST; a fast run answers 200 with a download URL, a longer one 202 with a job id to follow over server-sent events.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    tags: [
      ...SECTIONS.map((s) => ({ name: s, description: `${s} tools and presets (groups: ${Object.values(GROUP_TITLES).join(', ')})` })),
      { name: 'auth' },
      { name: 'api-keys' },
      { name: 'jobs' },
      { name: 'catalog' },
      { name: 'health' },
      { name: 'docs' },
      ...ACCOUNT_TAGS.map((name) => ({ name })),
      ...LIBRARY_TAGS.map((name) => ({ name })),
      ...MCP_TAGS.map((name) => ({ name })),
      ...WATCH_TAGS.map((name) => ({ name })),
    ],
    paths,
    components: {
      schemas: components,
      responses: errorResponseComponents(),
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'A session token from POST /api/auth/login, or an API key (si_…).' },
      },
    },
  };
  return cached;
}
