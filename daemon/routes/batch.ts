/**
 * POST /api/v1/tools/<section>/<tool_id>/batch: repeated `files` + `settings`. Inputs stream to disk,
 * then a ZIP streams back (X-Job-Id first) with each output added as soon as it is done, and a
 * manifest.json listing every input with its output name or its error.
 */
import { rm } from 'node:fs/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import yazl from 'yazl';
import { KilnError } from '../../src/core/errors.js';
import { validateRequest } from '../../src/tools/run-tool.js';
import { requireUser } from '../auth/authenticate.js';
import { requirePermission } from '../auth/permissions.js';
import { assembleSettings, readMultipart, type UploadedPart } from '../http/uploads.js';
import { runBatchItems } from '../jobs/batch-run.js';
import { redactSettings } from '../jobs/records.js';
import { baseToolId, findTarget, routeOf, targets, type Target } from '../jobs/targets.js';
import { finishJob, insertJob, updateJob } from '../store/jobs.js';
import { streamQueuedBatch } from './batch-queued.js';
import { contentDisposition } from './download.js';
import { errorResponses } from '../openapi/common.js';
import type { RouteDoc } from '../openapi/route-doc.js';
import { misrouted, sectionParam, toolIdParam } from './tools.js';

const MAX_BATCH_FILES = 500;

export async function batchRoutes(app: FastifyInstance): Promise<void> {
  for (const target of targets()) {
    if (target.batchable) app.post(routeOf(target) + '/batch', (request, reply) => runBatch(app, target, request, reply));
  }
  app.post('/api/v1/tools/:section/:toolId/batch', { schema: MISROUTED_BATCH_DOC }, async (request) => {
    const { section, toolId } = request.params as { section: string; toolId: string };
    const t = findTarget(toolId);
    if (t && t.section === section && !t.batchable) {
      throw new KilnError(
        'NOT_FOUND',
        `${toolId} has no batch route: it takes ${t.tool.input.kind === 'files' ? 'several files in one run' : t.tool.input.kind === 'none' ? 'no input file' : 'a required second file'}. Use POST ${routeOf(t)}.`,
      );
    }
    if (t && !t.batchable) throw new KilnError('NOT_FOUND', `${toolId} has no batch route; it runs at POST ${routeOf(t)}.`);
    throw misrouted(section, toolId, '/batch');
  });
}

/** A batch's target; a pipeline's carries its definition, so a worker on any instance can rebuild it. */
export type BatchTarget = Target | { target: Target; pipeline: { raw: unknown; name?: string } };

/** Runs a batch of `target`, or of the target named by the request's text fields (ad-hoc pipelines). */
export async function runBatch(
  app: FastifyInstance,
  targetOrResolve: BatchTarget | ((fields: Map<string, string>) => BatchTarget),
  request: FastifyRequest,
  reply: FastifyReply,
) {
  const user = requireUser(request);
  requirePermission(request, 'tools:use');
  const { jobs, config, store } = app.kiln;
  const { id, workDir, inDir } = await jobs.allocate();
  let files: UploadedPart[];
  let settings: Record<string, unknown>;
  let target: Target;
  let pipeline: { raw: unknown; name?: string } | undefined;
  try {
    if (!request.isMultipart())
      throw new KilnError(
        'VALIDATION_ERROR',
        'Send multipart/form-data with the inputs in repeated "files" fields and the settings as JSON in "settings".',
      );
    const parsed = await readMultipart(request, inDir, { maxFileBytes: config.maxUploadMb * 1048576, maxFiles: MAX_BATCH_FILES });
    const resolved = typeof targetOrResolve === 'function' ? targetOrResolve(parsed.fields) : targetOrResolve;
    ({ target, pipeline } = 'tool' in resolved ? { target: resolved, pipeline: undefined } : resolved);
    files = parsed.parts.filter((p) => p.field === 'files' || p.field === 'file');
    const stray = parsed.parts.find((p) => p.field !== 'files' && p.field !== 'file');
    if (stray)
      throw new KilnError('VALIDATION_ERROR', `The batch route takes its inputs in repeated "files" fields (got "${stray.field}").`, {
        details: [{ path: stray.field, message: 'unknown file field' }],
      });
    if (files.length === 0)
      throw new KilnError('VALIDATION_ERROR', 'No input files: send one or more "files" fields.', {
        details: [{ path: 'files', message: 'required' }],
      });
    if (parsed.fields.get('fileId')) throw new KilnError('VALIDATION_ERROR', 'fileId: the file library is not available for batch runs.');
    const raw = assembleSettings(target.tool, parsed.fields.get('settings'), parsed.fields);
    settings = validateRequest(target.tool, { files: [files[0]!], extra: {} }, raw);
  } catch (e) {
    await rm(workDir, { recursive: true, force: true });
    throw e;
  }

  // Scaled mode: any instance's worker runs a catalog tool's or a pipeline's batch (batch-queued.ts).
  if (jobs.distributed && (pipeline || findTarget(target.id) === target))
    return streamQueuedBatch(app, { id, owner: user, target, settings, files, workDir, pipeline }, reply);

  const now = Date.now();
  await insertJob(store.db, {
    id,
    owner_id: user.id,
    tool: target.id,
    base_tool: baseToolId(target),
    kind: 'batch',
    settings: JSON.stringify(redactSettings(settings)),
    status: 'running',
    progress: 0,
    stage: `0/${files.length}`,
    result: null,
    error: null,
    client_job_id: null,
    instance_id: jobs.instanceId,
    work_dir: workDir,
    output_path: null,
    output_name: null,
    content_type: 'application/zip',
    original_size: files.reduce((a, f) => a + f.size, 0),
    processed_size: null,
    created_at: now,
    started_at: now,
    finished_at: null,
  });

  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    'content-type': 'application/zip',
    'content-disposition': contentDisposition(`${target.id}-batch.zip`),
    'x-job-id': id,
    'cache-control': 'no-store',
  });
  res.flushHeaders();

  const controller = new AbortController();
  const onClientGone = () => {
    if (!res.writableFinished) controller.abort();
  };
  res.on('close', onClientGone);

  const done = (async () => {
    const zip = new yazl.ZipFile();
    const zipDone = new Promise<void>((resolve, reject) => {
      zip.outputStream.on('error', reject);
      res.on('error', reject);
      res.on('close', resolve);
      zip.outputStream.on('end', resolve);
    });
    zip.outputStream.pipe(res);
    const { summary, processed } = await runBatchItems({
      id,
      target,
      settings,
      files: files.map((f) => ({ path: f.path, name: f.name, size: f.size })),
      workDir,
      queue: jobs.queue,
      config,
      signal: controller.signal,
      zip,
      onItem: (finished, total) => {
        const percent = Math.round((finished / total) * 100);
        jobs.events.publish(id, { type: 'progress', percent, stage: `${finished}/${total}` });
        updateJob(store.db, id, { progress: percent, stage: `${finished}/${total}` }).catch(() => {});
      },
    });
    const { failed } = summary;
    if (controller.signal.aborted) throw new KilnError('CANCELLED', 'The batch was cancelled.');
    // Completed before the archive's last bytes go out: a client that holds the whole ZIP must find the
    // job done, even on a loaded machine where the stream would end before a later database write.
    await finishJob(store.db, id, {
      status: 'completed',
      progress: 100,
      stage: 'done',
      finished_at: Date.now(),
      processed_size: processed,
      result: JSON.stringify({ data: { total: files.length, succeeded: files.length - failed, failed } }),
    });
    jobs.events.publish(id, { type: 'completed', result: { jobId: id, total: files.length, succeeded: files.length - failed, failed } });
    zip.end();
    await zipDone;
  })();
  const finished = done
    .catch(async (e) => {
      await jobs.fail(id, workDir, e);
      res.destroy();
    })
    .finally(async () => {
      res.off('close', onClientGone);
      await rm(workDir, { recursive: true, force: true });
    });
  jobs.track(id, controller, finished);
  await finished;
}

const MISROUTED_BATCH_DOC: RouteDoc = {
  operationId: 'misroutedBatch',
  tags: ['catalog'],
  summary: 'Any other batch route: 404 that says why (no batch for this tool, or the right route).',
  parameters: [sectionParam, toolIdParam],
  response: errorResponses([401, 404]),
};
