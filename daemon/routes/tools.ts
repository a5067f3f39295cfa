/**
 * POST /api/v1/tools/<section>/<tool_id>: one route per catalog tool and preset. The upload streams
 * into the job's directory (or into memory, while there is room, for a tool that declares inMemory),
 * the request is validated (settings, and the inputs' kinds from their bytes) before queueing, then the
 * route waits up to SYNC_WAIT_MS: done → 200 with the result, otherwise 202 with the job id.
 */
import { mkdir, rm } from 'node:fs/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { KilnError } from '../../src/core/errors.js';
import { readsInputInMemory, SECTIONS } from '../../src/core/tool.js';
import { checkInputs, validateRequest } from '../../src/tools/run-tool.js';
import { requireUser } from '../auth/authenticate.js';
import { requirePermission } from '../auth/permissions.js';
import { assembleSettings, readMultipart, toToolInputs, type ParsedUpload } from '../http/uploads.js';
import { preferenceApplied, preferredWait, syncAnswer } from '../jobs/answer.js';
import { errorResponses } from '../openapi/common.js';
import type { RouteDoc } from '../openapi/route-doc.js';
import { findTarget, routeOf, targets, type Target } from '../jobs/targets.js';

export async function toolRoutes(app: FastifyInstance): Promise<void> {
  for (const target of targets()) {
    app.post(routeOf(target), (request, reply) => runTarget(app, target, request, reply));
  }
  // Static routes win over this one in the router: it only sees unknown ids or the wrong section.
  app.post('/api/v1/tools/:section/:toolId', { schema: MISROUTED_DOC }, async (request) => {
    const { section, toolId } = request.params as { section: string; toolId: string };
    throw misrouted(section, toolId);
  });
}

export function misrouted(section: string, toolId: string, suffix = ''): KilnError {
  const t = findTarget(toolId);
  if (t)
    return new KilnError('NOT_FOUND', `${toolId} is in the ${t.section} section: POST ${routeOf(t)}${suffix}.`, {
      details: { route: routeOf(t) + suffix },
    });
  if (!(SECTIONS as readonly string[]).includes(section))
    return new KilnError('NOT_FOUND', `No section ${section}; the sections are ${SECTIONS.join(', ')}.`);
  return new KilnError('NOT_FOUND', `No tool or preset named ${toolId}. GET /api/v1/tools lists them.`);
}

async function readRequest(
  target: Target,
  request: FastifyRequest,
  inDir: string,
  arena: Buffer | undefined,
): Promise<ParsedUpload & { settingsJson?: string; jsonSettings?: unknown }> {
  if (request.isMultipart()) {
    const parsed = await readMultipart(request, inDir, { arena });
    return { ...parsed, settingsJson: parsed.fields.get('settings') };
  }
  if (target.tool.input.kind === 'none') return { parts: [], fields: new Map(), jsonSettings: request.body ?? {} };
  throw new KilnError(
    'VALIDATION_ERROR',
    `${target.id} takes a file: send multipart/form-data with the input in the field "file" and the settings as a JSON string in "settings".`,
    {
      details: [{ path: 'file', message: 'required' }],
    },
  );
}

async function runTarget(app: FastifyInstance, target: Target, request: FastifyRequest, reply: FastifyReply) {
  const user = requireUser(request);
  requirePermission(request, 'tools:use');
  const { jobs, config } = app.kiln;
  // A tool that reads its upload through openInput takes it from memory while there is room for it.
  const memory =
    readsInputInMemory(target.tool) && request.isMultipart()
      ? app.kiln.memoryInputs?.reserve(Number(request.headers['content-length']))
      : undefined;
  const release = memory?.release;
  // Uploads held in memory need no upload directory.
  const { id, workDir, inDir } = await jobs.allocate({ inDir: !memory }).catch((e: unknown) => {
    release?.();
    throw e;
  });
  try {
    const req = await readRequest(target, request, inDir, memory?.arena);
    const fileId = req.fields.get('fileId');
    const library = app.kiln.fileLibrary;
    if (fileId && !library)
      throw new KilnError('VALIDATION_ERROR', 'fileId: the file library is not available on this server.', {
        details: [{ path: 'fileId', message: 'file library not available' }],
      });
    const inputs = toToolInputs(target.tool, req.parts);
    // A library item stands in for the upload when no file was sent.
    if (fileId && library && inputs.files.length === 0 && target.tool.input.kind !== 'none') {
      // It writes the item into inDir, which allocate left unmade for an upload held in memory.
      await mkdir(inDir, { recursive: true });
      inputs.files.push(await library.resolveInput(user, fileId, inDir, request));
    }
    let raw: Record<string, unknown>;
    if (req.jsonSettings !== undefined) {
      if (typeof req.jsonSettings !== 'object' || req.jsonSettings === null || Array.isArray(req.jsonSettings)) {
        throw new KilnError('VALIDATION_ERROR', 'The JSON body must be the settings object.', {
          details: [{ path: 'settings', message: 'expected an object' }],
        });
      }
      raw = { ...(req.jsonSettings as Record<string, unknown>) };
    } else {
      raw = assembleSettings(target.tool, req.settingsJson, req.fields);
    }
    const settings = validateRequest(target.tool, inputs, raw);
    // The inputs' kinds from their bytes before queueing: a wrong file is refused now (415), not by a
    // 202 whose job fails later.
    await checkInputs(target.tool, inputs, config.allowPostScript);
    await target.tool.preflight?.(settings, { dataDir: config.dataDir, inputs });
    const clientJobId = req.fields.get('clientJobId')?.slice(0, 200);
    await jobs.submit({ id, owner: user, target, settings, inputs, workDir, clientJobId, saveToFile: fileId, release });
  } catch (e) {
    release?.();
    await rm(workDir, { recursive: true, force: true });
    throw e;
  }
  const { waitMs, applied } = preferredWait(request.headers.prefer, (await app.kiln.limits.settings()).syncWindowMs);
  const answer = await syncAnswer(jobs, id, waitMs);
  reply.headers(preferenceApplied(applied, answer.status));
  return reply.code(answer.status).headers(answer.headers).send(answer.body);
}

export const sectionParam = { name: 'section', in: 'path', required: true, schema: { type: 'string' } };
export const toolIdParam = { name: 'toolId', in: 'path', required: true, schema: { type: 'string' } };

const MISROUTED_DOC: RouteDoc = {
  operationId: 'misroutedTool',
  tags: ['catalog'],
  summary: 'Any other tool route: 404 that names the right route.',
  description:
    'Only reached for an unknown tool or preset, or one asked for under the wrong section; the error details carry the right `route` when there is one.',
  parameters: [sectionParam, toolIdParam],
  response: errorResponses([401, 404]),
};
