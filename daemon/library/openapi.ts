/**
 * OpenAPI 3.1 paths of the file library (/api/v1/files) and pipelines (/api/v1/pipelines) routes,
 * merged into the daemon's document (daemon/openapi/document.ts). The schemas follow what
 * daemon/routes/{files,pipelines}.ts send: itemView, versionView and pipelineView.
 */
import { ACCEPTED, PREFER } from '../openapi/common.js';

type Json = Record<string, unknown>;

const obj = (properties: Json = {}, required?: string[]): Json => ({ type: 'object', properties, ...(required ? { required } : {}) });
const str = { type: 'string' };
const int = { type: 'integer' };
const date = { type: 'string', format: 'date-time' };
const binary = { type: 'string', format: 'binary' };
const nullable = (type: string, extra: Json = {}) => ({ type: [type, 'null'], ...extra });
const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const err = (...codes: number[]) => Object.fromEntries(codes.map((c) => [String(c), { $ref: `#/components/responses/Error${c}` }]));
const ok = (schema: Json, description = 'OK') => ({ description, content: { 'application/json': { schema } } });
const jsonBody = (schema: Json) => ({ required: true, content: { 'application/json': { schema } } });
const pathParam = (name: string, description: string, schema: Json = str) => ({ name, in: 'path', required: true, description, schema });

const fileId = pathParam('id', 'The library item id.');
const pipelineId = pathParam(
  'id',
  'The pipeline id, the name of one of yours, or the name of a team pipeline you see (when only one has it).',
);
const versionNumber = pathParam('version', 'A version number (1, 2, …).', { type: 'integer', minimum: 1 });
const SCOPE = {
  type: 'string',
  enum: ['private', 'team'],
  description:
    "private: its owner only (default). team: also every member of the owner's team, who may list, download and run it; only the owner and admins change or delete it.",
};
const scopeFilter = {
  name: 'scope',
  in: 'query',
  schema: { type: 'string', enum: ['all', 'private', 'team'], default: 'all' },
  description: 'all: everything you see (yours, and what your team shares); private: your private ones; team: those shared with your team.',
};

const ITEM = obj(
  {
    id: str,
    name: str,
    ownerId: str,
    contentType: { type: 'string', description: 'Of the newest version.' },
    size: { type: 'integer', description: 'Bytes of the newest version.' },
    latestVersion: { type: 'integer', minimum: 1 },
    scope: SCOPE,
    createdAt: date,
    updatedAt: date,
  },
  ['id', 'name', 'ownerId', 'contentType', 'size', 'latestVersion', 'scope', 'createdAt', 'updatedAt'],
);
const VERSION = obj(
  {
    version: { type: 'integer', minimum: 1, description: 'Numbers of deleted versions are never reused.' },
    name: str,
    size: int,
    contentType: str,
    sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' },
    createdBy: { type: 'string', description: 'The user id that made this version.' },
    createdAt: date,
    source: { type: 'string', enum: ['upload', 'tool', 'restore'] },
    tool: nullable('string', { description: 'The tool that produced it (source tool).' }),
    settings: nullable('object', { description: 'The settings the tool ran with, secrets redacted.' }),
    jobId: nullable('string'),
    restoredFrom: nullable('integer', { description: 'For restores: the version copied.' }),
  },
  ['version', 'name', 'size', 'contentType', 'sha256', 'createdBy', 'createdAt', 'source'],
);
const withAll = (extra: Json, required: string[]) => ({ allOf: [ITEM, obj(extra, required)] });
const ITEM_WITH_VERSIONS = withAll({ versions: { type: 'array', items: VERSION } }, ['versions']);
const ITEM_WITH_VERSION = withAll({ version: VERSION }, ['version']);
const DELETED = obj({ id: str, deleted: { const: true } }, ['id', 'deleted']);

const upload = (what: string, first = false): Json => ({
  required: true,
  content: {
    'multipart/form-data': {
      schema: obj(
        {
          file: { ...binary, description: what },
          name: {
            type: 'string',
            description: first
              ? 'The item name (default: the uploaded file name).'
              : "The version's file name (default: the uploaded file name); its extension names the download. Rename the item with PATCH.",
          },
          ...(first ? { scope: SCOPE } : {}),
        },
        ['file'],
      ),
    },
  },
});

const fileDownload = (parameters: Json[]): Json => ({
  parameters: [
    ...parameters,
    { name: 'Range', in: 'header', schema: str, description: 'bytes=start-end' },
    { name: 'If-None-Match', in: 'header', schema: str, description: 'ETags the client holds: 304 when one is this content.' },
  ],
  responses: {
    '200': {
      description: 'The content with its stored content type, Content-Disposition and a sandboxing Content-Security-Policy.',
      headers: {
        ETag: { description: 'The sha256 of the content, quoted.', schema: str },
        'X-Kiln-Version': { description: 'The version number sent.', schema: int },
      },
      content: { '*/*': { schema: binary } },
    },
    '206': { description: 'The requested byte range.', content: { '*/*': { schema: binary } } },
    '304': { description: 'If-None-Match named this content (its ETag): not sent again.' },
    '416': {
      description: 'The range does not fit the file (USAGE_ERROR).',
      content: { 'application/json': { schema: schemaRef('Error') } },
    },
    ...err(400, 401, 404),
  },
});

const STEP = obj(
  {
    tool: { type: 'string', minLength: 1, description: 'A tool or preset id.' },
    settings: { type: 'object', default: {}, description: "The step's settings (validated against the tool's schema)." },
  },
  ['tool'],
);
const PIPELINE_DEF: Json = {
  ...obj(
    {
      name: { type: 'string', minLength: 1, maxLength: 100, pattern: '^[\\w.-]+$' },
      description: { type: 'string', maxLength: 1000 },
      steps: { type: 'array', items: { ...STEP, additionalProperties: false }, minItems: 1, maxItems: 20 },
    },
    ['steps'],
  ),
  description:
    'Steps run in order; each output feeds the next step. Every step is validated (settings, and what it takes against what the previous step produces) before anything runs.',
};
const defWithScope = (scope: Json): Json => ({ ...PIPELINE_DEF, properties: { ...(PIPELINE_DEF.properties as Json), scope } });
const SAVED_DEF = { ...defWithScope(SCOPE), required: ['name', 'steps'] };
const REPLACED_DEF = defWithScope({ ...SCOPE, description: `${SCOPE.description} Unchanged when not sent.` });
const PIPELINE = obj(
  {
    id: str,
    name: str,
    description: nullable('string'),
    ownerId: str,
    scope: SCOPE,
    steps: { type: 'array', items: STEP },
    createdAt: date,
    updatedAt: date,
  },
  ['id', 'name', 'description', 'ownerId', 'scope', 'steps', 'createdAt', 'updatedAt'],
);

const RUN_ERRORS = err(400, 401, 403, 404, 409, 413, 415, 499, 500, 501, 503, 504);
const runOne = (adHoc: boolean): Json => ({
  required: true,
  content: {
    'multipart/form-data': {
      schema: obj(
        {
          file: {
            description: "The input, in the first step's `file` field(s); omit it when fileId names a library item.",
            oneOf: [binary, { type: 'array', items: binary }],
          },
          ...(adHoc ? { pipeline: { ...PIPELINE_DEF, description: 'The pipeline as a JSON string.' } } : {}),
          fileId: { type: 'string', description: 'A library item as the input; the output is saved as a new version of it (savedFileId).' },
          clientJobId: { type: 'string', maxLength: 200, description: 'Caller-chosen id to correlate progress.' },
        },
        adHoc ? ['pipeline'] : undefined,
      ),
      ...(adHoc ? { encoding: { pipeline: { contentType: 'application/json' } } } : {}),
    },
  },
});
const runResponses: Json = {
  '200': ok(schemaRef('RunResult'), 'Finished inside the synchronous window.'),
  '202': { ...ACCEPTED, description: `${ACCEPTED.description} The stage names the running step.` },
  ...RUN_ERRORS,
};
const runBatch = (adHoc: boolean): Json => ({
  required: true,
  content: {
    'multipart/form-data': {
      schema: obj(
        {
          files: { type: 'array', items: binary, description: 'Repeated `files` parts, one run each.' },
          ...(adHoc ? { pipeline: { ...PIPELINE_DEF, description: 'The pipeline as a JSON string.' } } : {}),
        },
        adHoc ? ['files', 'pipeline'] : ['files'],
      ),
      ...(adHoc ? { encoding: { pipeline: { contentType: 'application/json' } } } : {}),
    },
  },
});
const batchResponses: Json = {
  '200': {
    description:
      'A ZIP archive, streamed once every run has ended (the job is completed before its first byte): the outputs in input order, then manifest.json (every input with its output name or its error). Inputs are checked from their bytes first; when none is one the pipeline takes: 415 and no job.',
    headers: {
      'X-Job-Id': { description: 'The batch job id.', schema: str },
      'X-Batch-Total': { description: 'Inputs in the batch.', schema: { type: 'integer' } },
      'X-Batch-Succeeded': { description: 'Inputs that gave an output.', schema: { type: 'integer' } },
      'X-Batch-Failed': { description: 'Inputs that failed (their errors are in manifest.json).', schema: { type: 'integer' } },
    },
    content: { 'application/zip': { schema: binary } },
  },
  '202': { ...ACCEPTED, description: "With `Prefer: respond-async`: at once; the archive becomes the job's output." },
  // 409 FEATURE_NOT_INSTALLED: a step needs a feature bundle that is not installed (before any input runs).
  ...err(400, 401, 403, 404, 409, 413, 415),
};

function op(operationId: string, tag: string, summary: string, extra: Json): Json {
  return { operationId, tags: [tag], summary, ...extra };
}

export const LIBRARY_TAGS = ['files', 'pipelines'];

export function libraryPaths(): Json {
  return {
    '/api/v1/files': {
      post: op('uploadFile', 'files', 'Add a file to your library (version 1).', {
        description:
          'Counts against LIBRARY_QUOTA_MB (content you already hold costs nothing): 413 with reason "quota" when it does not fit.',
        requestBody: upload('The content.', true),
        responses: { '201': ok(ITEM_WITH_VERSIONS, 'Created'), ...err(400, 401, 413) },
      }),
      get: op(
        'listFiles',
        'files',
        'Your library items and those your team shares, most recently changed first (with files:all: everyone’s).',
        {
          parameters: [
            { name: 'page', in: 'query', schema: { type: 'integer', minimum: 1, default: 1 } },
            { name: 'pageSize', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 200, default: 50 } },
            {
              name: 'type',
              in: 'query',
              schema: str,
              description:
                'A family (image, video, audio, text, font), a content type (image/png, image/*) or an extension (.jpg, txt) of the name the newest version downloads under (jpg and jpeg alike).',
            },
            { name: 'name', in: 'query', schema: str, description: 'Part of the name, case-insensitive.' },
            { name: 'owner', in: 'query', schema: str, description: 'A user id: only their items among those you see.' },
            scopeFilter,
          ],
          responses: {
            '200': ok(
              obj({ items: { type: 'array', items: ITEM }, total: int, page: int, pageSize: int }, ['items', 'total', 'page', 'pageSize']),
            ),
            ...err(400, 401),
          },
        },
      ),
    },
    '/api/v1/files/usage': {
      get: op('fileUsage', 'files', 'Bytes your library holds, and the quota.', {
        responses: {
          '200': ok(
            obj(
              {
                usedBytes: int,
                quotaBytes: nullable('integer', { description: 'null: no quota.' }),
                team: {
                  ...obj({ id: str, usedBytes: int }, ['id', 'usedBytes']),
                  description: "When you are in a team: the distinct content of its members' team items.",
                },
              },
              ['usedBytes', 'quotaBytes'],
            ),
          ),
          ...err(401),
        },
      }),
    },
    '/api/v1/files/{id}': {
      get: op('getFile', 'files', 'A library item with its versions.', {
        parameters: [fileId],
        responses: { '200': ok(ITEM_WITH_VERSIONS), ...err(401, 404) },
      }),
      patch: op('renameFile', 'files', 'Rename a library item and/or change its scope (owner or admin).', {
        parameters: [fileId],
        requestBody: jsonBody({ ...obj({ name: str, scope: SCOPE }), minProperties: 1 }),
        responses: { '200': ok(ITEM), ...err(400, 401, 403, 404) },
      }),
      delete: op('deleteFile', 'files', 'Delete a library item and all its versions (owner or admin).', {
        parameters: [fileId],
        responses: { '200': ok(DELETED), ...err(401, 403, 404) },
      }),
    },
    '/api/v1/files/{id}/versions': {
      get: op('listFileVersions', 'files', 'The versions of a library item, newest first.', {
        parameters: [fileId],
        responses: { '200': ok(obj({ versions: { type: 'array', items: VERSION } }, ['versions'])), ...err(401, 404) },
      }),
      post: op('addFileVersion', 'files', 'Upload a new version of a library item.', {
        parameters: [fileId],
        requestBody: upload('The new content.'),
        responses: { '201': ok(ITEM_WITH_VERSION, 'Created'), ...err(400, 401, 403, 404, 413) },
      }),
    },
    '/api/v1/files/{id}/download': {
      get: op(
        'downloadFile',
        'files',
        'The content of a library item (the newest version unless `version` says otherwise).',
        fileDownload([
          fileId,
          {
            name: 'version',
            in: 'query',
            schema: { oneOf: [{ type: 'integer', minimum: 1 }, { const: 'latest' }] },
            description: 'A version number, or latest.',
          },
        ]),
      ),
    },
    '/api/v1/files/{id}/versions/{version}/download': {
      get: op('downloadFileVersion', 'files', 'The content of one version.', fileDownload([fileId, versionNumber])),
    },
    '/api/v1/files/{id}/versions/{version}/restore': {
      post: op('restoreFileVersion', 'files', 'Copy an old version as the new newest version.', {
        parameters: [fileId, versionNumber],
        responses: { '201': ok(ITEM_WITH_VERSION, 'Created'), ...err(400, 401, 403, 404, 413) },
      }),
    },
    '/api/v1/files/{id}/versions/{version}': {
      delete: op('deleteFileVersion', 'files', 'Delete one version (not the only one: delete the item instead).', {
        parameters: [fileId, versionNumber],
        responses: { '200': ok(ITEM, 'The item as it is now.'), ...err(400, 401, 403, 404, 409) },
      }),
    },
    '/api/v1/pipelines': {
      post: op('createPipeline', 'pipelines', 'Save a pipeline under a name unique among yours.', {
        requestBody: jsonBody(SAVED_DEF),
        responses: { '201': ok(PIPELINE, 'Created'), ...err(400, 401, 409) },
      }),
      get: op('listPipelines', 'pipelines', 'Your saved pipelines and those your team shares, by name (with pipelines:all: everyone’s).', {
        parameters: [scopeFilter],
        responses: { '200': ok(obj({ pipelines: { type: 'array', items: PIPELINE } }, ['pipelines'])), ...err(401) },
      }),
    },
    '/api/v1/pipelines/validate': {
      post: op('validatePipeline', 'pipelines', 'Check a pipeline without running or saving it: 400 names the failing step.', {
        requestBody: jsonBody(PIPELINE_DEF),
        responses: {
          '200': ok(
            obj(
              {
                valid: { const: true },
                name: nullable('string'),
                steps: {
                  type: 'array',
                  items: obj({ tool: str, settings: { type: 'object', description: 'With defaults filled in.' } }, ['tool', 'settings']),
                },
              },
              ['valid', 'name', 'steps'],
            ),
          ),
          ...err(400, 401),
        },
      }),
    },
    '/api/v1/pipelines/run': {
      post: op('runPipeline', 'pipelines', 'Run an ad-hoc pipeline on one input: 200 with the result, or 202 with a job id.', {
        parameters: [PREFER],
        requestBody: runOne(true),
        responses: runResponses,
      }),
    },
    '/api/v1/pipelines/batch': {
      post: op('batchPipeline', 'pipelines', 'Run an ad-hoc pipeline on many inputs: one ZIP.', {
        requestBody: runBatch(true),
        responses: batchResponses,
      }),
    },
    '/api/v1/pipelines/{id}': {
      get: op('getPipeline', 'pipelines', 'A saved pipeline.', {
        parameters: [pipelineId],
        responses: { '200': ok(PIPELINE), ...err(401, 404, 409) },
      }),
      put: op('updatePipeline', 'pipelines', 'Replace a saved pipeline (the name and scope stay unless given; owner or admin).', {
        parameters: [pipelineId],
        requestBody: jsonBody(REPLACED_DEF),
        responses: { '200': ok(PIPELINE), ...err(400, 401, 403, 404, 409) },
      }),
      patch: op('sharePipeline', 'pipelines', 'Change the scope of a saved pipeline (owner or admin).', {
        parameters: [pipelineId],
        requestBody: jsonBody(obj({ scope: SCOPE }, ['scope'])),
        responses: { '200': ok(PIPELINE), ...err(400, 401, 403, 404) },
      }),
      delete: op('deletePipeline', 'pipelines', 'Delete a saved pipeline (owner or admin).', {
        parameters: [pipelineId],
        responses: { '200': ok(DELETED), ...err(401, 403, 404) },
      }),
    },
    '/api/v1/pipelines/{id}/run': {
      post: op('runSavedPipeline', 'pipelines', 'Run a saved pipeline on one input: 200 with the result, or 202 with a job id.', {
        parameters: [pipelineId, PREFER],
        requestBody: runOne(false),
        responses: runResponses,
      }),
    },
    '/api/v1/pipelines/{id}/batch': {
      post: op('batchSavedPipeline', 'pipelines', 'Run a saved pipeline on many inputs: one ZIP.', {
        parameters: [pipelineId],
        requestBody: runBatch(false),
        responses: batchResponses,
      }),
    },
  };
}
