/**
 * /api/v1/pipelines: saved pipelines (create, list, get, update, share, delete; owned, `team` ones seen
 * and run by the owner's teammates, admins see all) and
 * runs of a saved or an ad-hoc pipeline — on one file (200 with the result, or 202 with a job id, like a
 * tool run; `fileId` works as for tools) or on many (a streamed ZIP, like a tool's batch route).
 * Every step is validated before anything runs; the job's progress stage names the running step.
 */
import { rm } from 'node:fs/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { KilnError } from '../../src/core/errors.js';
import { validatePipeline } from '../../src/pipelines/pipeline.js';
import { checkInputs, validateRequest } from '../../src/tools/run-tool.js';
import { requireUser } from '../auth/authenticate.js';
import { requirePermission } from '../auth/permissions.js';
import { assembleSettings, readMultipart, toToolInputs } from '../http/uploads.js';
import { preferenceApplied, preferredWait, syncAnswer } from '../jobs/answer.js';
import { type PipelineTarget, pipelineTarget } from '../jobs/pipeline-target.js';
import { definitionOf, PipelineStore, pipelineView } from '../library/pipelines.js';
import { parseScopeFilter } from '../library/sharing.js';
import { runBatch } from './batch.js';

interface Resolved extends PipelineTarget {
  /** The definition as validated (secrets in clear): a worker on another instance rebuilds the target from it. */
  definition: { raw: unknown; name?: string };
}

function toTarget(raw: unknown, fallbackName?: string): Resolved {
  return { ...pipelineTarget(raw, fallbackName), definition: { raw, name: fallbackName } };
}

/** The ad-hoc pipeline in the multipart field "pipeline" (a JSON string). */
function fromField(fields: Map<string, string>): Resolved {
  const text = fields.get('pipeline');
  if (!text)
    throw new KilnError(
      'VALIDATION_ERROR',
      'Send the pipeline as JSON in the form field "pipeline" ({"steps": [{"tool": "...", "settings": {...}}]}).',
      { details: [{ path: 'pipeline', message: 'required' }] },
    );
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new KilnError('VALIDATION_ERROR', `The pipeline field is not valid JSON: ${(e as Error).message}`, {
      details: [{ path: 'pipeline', message: 'invalid JSON' }],
    });
  }
  fields.delete('pipeline');
  return toTarget(raw);
}

/** A JSON body's fields as the text fields of a form (an object value, such as "pipeline", as its JSON). */
function jsonFields(body: unknown): Map<string, string> {
  if (body === undefined || body === null) return new Map();
  if (typeof body !== 'object' || Array.isArray(body))
    throw new KilnError('VALIDATION_ERROR', 'The JSON body must be an object.', {
      details: [{ path: 'body', message: 'expected an object' }],
    });
  return new Map(Object.entries(body).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
}

function jsonBody(request: FastifyRequest): unknown {
  if (request.isMultipart()) throw new KilnError('VALIDATION_ERROR', 'Send the pipeline as a JSON body (content-type application/json).');
  return request.body;
}

export async function pipelineRoutes(app: FastifyInstance): Promise<void> {
  const store = new PipelineStore(app.kiln.store.db, app.kiln.dataKey);
  await store.encryptClearSecrets();

  app.post('/api/v1/pipelines', async (request, reply) => {
    const user = requireUser(request);
    return reply.code(201).send(pipelineView(await store.create(user, jsonBody(request))));
  });

  app.get('/api/v1/pipelines', async (request) => {
    const user = requireUser(request);
    const scope = parseScopeFilter((request.query as { scope?: string }).scope);
    return { pipelines: (await store.list(user, scope)).map(pipelineView) };
  });

  app.post('/api/v1/pipelines/validate', async (request) => {
    requireUser(request);
    const { pipeline, steps } = validatePipeline(definitionOf(jsonBody(request)));
    return { valid: true, name: pipeline.name ?? null, steps: steps.map((s) => ({ tool: s.tool.id, settings: s.settings })) };
  });

  app.post('/api/v1/pipelines/run', (request, reply) => runOne(app, request, reply, (fields) => fromField(fields)));
  app.post('/api/v1/pipelines/batch', (request, reply) =>
    runBatch(
      app,
      (fields) => {
        const { target, definition } = fromField(fields);
        return { target, pipeline: definition };
      },
      request,
      reply,
    ),
  );

  app.get('/api/v1/pipelines/:id', async (request) => {
    const user = requireUser(request);
    return pipelineView(await store.get(user, (request.params as { id: string }).id));
  });

  app.put('/api/v1/pipelines/:id', async (request) => {
    const user = requireUser(request);
    return pipelineView(await store.update(user, (request.params as { id: string }).id, jsonBody(request)));
  });

  app.patch('/api/v1/pipelines/:id', async (request) => {
    const user = requireUser(request);
    const body = jsonBody(request) as { scope?: unknown } | null;
    return pipelineView(await store.setScope(user, (request.params as { id: string }).id, body?.scope));
  });

  app.delete('/api/v1/pipelines/:id', async (request) => {
    const user = requireUser(request);
    const id = (request.params as { id: string }).id;
    await store.delete(user, id);
    return { id, deleted: true };
  });

  const saved = async (request: FastifyRequest): Promise<Resolved> => {
    const user = requireUser(request);
    const row = await store.get(user, (request.params as { id: string }).id);
    return toTarget(store.reveal(row), row.name);
  };
  app.post('/api/v1/pipelines/:id/run', async (request, reply) => {
    const resolved = await saved(request);
    return runOne(app, request, reply, () => resolved);
  });
  app.post('/api/v1/pipelines/:id/batch', async (request, reply) => {
    const { target, definition } = await saved(request);
    return runBatch(app, { target, pipeline: definition }, request, reply);
  });
}

/** One run through the job service: 200 with the result within SYNC_WAIT_MS, else 202 with the job id. */
async function runOne(
  app: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
  resolve: (fields: Map<string, string>) => Resolved,
) {
  const user = requireUser(request);
  requirePermission(request, 'tools:use');
  const { jobs, config } = app.kiln;
  const { id, workDir, inDir } = await jobs.allocate();
  try {
    const multipart = request.isMultipart();
    // A JSON body (or none) is a request without an upload, as for a tool that takes no file: a pipeline
    // whose first step makes its own input (qr-generate → png-to-jpg), which `kiln pipeline run NAME` sends so.
    const parsed = multipart ? await readMultipart(request, inDir, {}) : { parts: [], fields: jsonFields(request.body) };
    // Validation of every step happens here, before the upload is queued.
    const { target, record, definition } = resolve(parsed.fields);
    if (!multipart && target.tool.input.kind !== 'none')
      throw new KilnError('VALIDATION_ERROR', 'Send multipart/form-data with the input in "file" (or a library item in "fileId").', {
        details: [{ path: 'file', message: 'required' }],
      });
    const fileId = parsed.fields.get('fileId');
    const library = app.kiln.fileLibrary;
    if (fileId && !library)
      throw new KilnError('VALIDATION_ERROR', 'fileId: the file library is not available on this server.', {
        details: [{ path: 'fileId', message: 'file library not available' }],
      });
    const inputs = toToolInputs(target.tool, parsed.parts);
    if (fileId && library && inputs.files.length === 0) inputs.files.push(await library.resolveInput(user, fileId, inDir, request));
    // A pipeline takes no settings of its own: a `settings` field or a stray text field is refused as on
    // its batch route and on a tool's, never silently dropped.
    validateRequest(target.tool, inputs, assembleSettings(target.tool, parsed.fields.get('settings'), parsed.fields));
    // The input's kind from its bytes before queueing, as for a tool run: 415 now, never a 202 that fails.
    await checkInputs(target.tool, inputs, config.allowPostScript);
    // Every step's engines and bundles (pipelineTool's preflight), as a tool route checks its own: 4xx now,
    // not a queued job that fails at step 2 once step 1 has run.
    await target.tool.preflight?.({}, { dataDir: config.dataDir, inputs });
    const clientJobId = parsed.fields.get('clientJobId')?.slice(0, 200);
    await jobs.submit({
      id,
      owner: user,
      target,
      settings: record,
      inputs,
      workDir,
      clientJobId,
      saveToFile: fileId,
      pipeline: definition,
    });
  } catch (e) {
    await rm(workDir, { recursive: true, force: true });
    throw e;
  }
  const { waitMs, applied } = preferredWait(request.headers.prefer, (await app.kiln.limits.settings()).syncWindowMs);
  const answer = await syncAnswer(jobs, id, waitMs);
  reply.headers(preferenceApplied(applied, answer.status));
  return reply.code(answer.status).headers(answer.headers).send(answer.body);
}
