/**
 * POST /api/v1/tools/<section>/<tool_id>/batch: repeated `files` + `settings`. Inputs stream to disk and
 * are checked from their bytes (refused ones take no queue slot; all refused → 415, no job), each runs
 * as its own queued run, then the ZIP streams back with X-Job-Id and the counts in X-Batch-Total,
 * X-Batch-Succeeded and X-Batch-Failed, the outputs in input order, and a manifest.json listing every
 * input with its output name or its error. The answer starts once every run has ended: headers cannot
 * be sent after the body, and a client must see failures without unzipping. With Prefer: respond-async
 * the answer is a 202 at once and the archive becomes the job's output (GET /api/v1/download/…).
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { KilnError, toKilnError } from '../../src/core/errors.js';
import { checkInputs, validateRequest } from '../../src/tools/run-tool.js';
import { requireUser } from '../auth/authenticate.js';
import { requirePermission } from '../auth/permissions.js';
import { assembleSettings, readMultipart, type UploadedPart } from '../http/uploads.js';
import { batchArchive, countItems, type ManifestItem, writeBatchArchive } from '../jobs/batch-archive.js';
import { batchProgress, runBatchItems } from '../jobs/batch-run.js';
import { preferredWait, syncAnswer } from '../jobs/answer.js';
import { jobResult, redactSettings } from '../jobs/records.js';
import { outputStep } from '../jobs/steps.js';
import { baseToolId, findTarget, routeOf, targets, type Target } from '../jobs/targets.js';
import { finishJob, getJob, insertJob } from '../store/jobs.js';
import { batchZipHeaders, recordedFailure, streamQueuedBatch } from './batch-queued.js';
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
      throw new KilnError('NOT_FOUND', `${toolId} has no batch route: ${whyNoBatch(t.tool)}. Use POST ${routeOf(t)}.`);
    }
    if (t && !t.batchable) throw new KilnError('NOT_FOUND', `${toolId} has no batch route; it runs at POST ${routeOf(t)}.`);
    throw misrouted(section, toolId, '/batch');
  });
}

/** Why a tool is not batched, in its own terms (remove-background's second file is optional, say). */
function whyNoBatch(tool: Target['tool']): string {
  const input = tool.input;
  if (input.kind === 'files') return 'it takes several files in one run';
  if (input.kind === 'none') return 'it takes no input file';
  const second = (input.extra ?? []).find((x) => x.required);
  if (second) return 'it takes a required second file';
  return 'it is not one of the batch tools (catalog: batchEligible false)';
}

/**
 * A pipeline whose first step takes no file, or several at once (merge-pdf), has no batch: each input
 * runs on its own. It was refused with the first step's own words ("pipeline needs at least 2 files
 * (got 1)" for a batch of two, "takes no input file" for a batch of files), which never said why.
 */
function refuseUnbatchable(target: Target, pipeline: { raw: unknown }): void {
  const input = target.tool.input;
  // The definition validated already: steps[0] is there.
  const first = (pipeline.raw as { steps: { tool: string }[] }).steps[0]!.tool;
  const why =
    input.kind === 'none'
      ? `${first} takes no input file`
      : input.kind === 'files' && input.min > 1
        ? `${first} takes at least ${input.min} files in one run, and a batch runs each input on its own`
        : undefined;
  if (why)
    throw new KilnError('VALIDATION_ERROR', `This pipeline cannot run as a batch: its first step, ${why}. Run it once instead (…/run).`, {
      details: [{ path: 'files', message: 'no batch for this pipeline' }],
    });
}

/**
 * The inputs the tool does not take, by index, from their bytes (before anything is queued). When it
 * takes none of them the whole batch is refused with UNSUPPORTED_INPUT (415) and no job is made.
 */
async function refusedInputs(target: Target, files: UploadedPart[], postscript: boolean): Promise<Map<number, ManifestItem['error']>> {
  const refused = new Map<number, KilnError>();
  await Promise.all(
    files.map((f, i) =>
      checkInputs(target.tool, { files: [{ path: f.path, name: f.name, size: f.size }], extra: {} }, postscript).catch((e: unknown) =>
        refused.set(i, toKilnError(e)),
      ),
    ),
  );
  if (refused.size === files.length) {
    const all = [...refused.values()];
    if (all.length === 1) throw all[0]!;
    throw new KilnError(
      'UNSUPPORTED_INPUT',
      `None of the ${all.length} files is one ${target.id} takes: ${all.map((e) => e.message).join(' ')}`,
      {
        details: all.map((e) => e.toJSON().error),
      },
    );
  }
  return new Map([...refused].map(([i, e]) => [i, e.toJSON().error]));
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
  let clientJobId: string | undefined;
  let refused: Map<number, ManifestItem['error']>;
  let pipeline: { raw: unknown; name?: string } | undefined;
  try {
    if (!request.isMultipart())
      throw new KilnError(
        'VALIDATION_ERROR',
        'Send multipart/form-data with the inputs in repeated "files" fields and the settings as JSON in "settings".',
      );
    const parsed = await readMultipart(request, inDir, { maxFiles: MAX_BATCH_FILES });
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
    if (pipeline) refuseUnbatchable(target, pipeline);
    const raw = assembleSettings(target.tool, parsed.fields.get('settings'), parsed.fields);
    settings = validateRequest(target.tool, { files: [files[0]!], extra: {} }, raw);
    clientJobId = parsed.fields.get('clientJobId')?.slice(0, 200) || undefined;
    // A pipeline's preflight checks only what its steps need (engines, bundles), whatever the input: a
    // missing one refuses the whole batch now (409), not each input in the archive after step 1 ran.
    if (pipeline) await target.tool.preflight?.(settings, { dataDir: config.dataDir, inputs: { files: [files[0]!], extra: {} } });
    refused = await refusedInputs(target, files, config.allowPostScript);
  } catch (e) {
    await rm(workDir, { recursive: true, force: true });
    throw e;
  }

  // Prefer: respond-async: 202 now; the archive is kept as the job's output and downloaded later.
  // (wait=N is not honoured here, with respond-async or alone: a batch answers with its archive or not at all.)
  const detached = preferredWait(request.headers.prefer, 0).applied?.startsWith('respond-async') === true;

  // Scaled mode: any instance's worker runs a catalog tool's or a pipeline's batch (batch-queued.ts).
  // Inputs were checked above; a refused one fails there as it would here.
  if (jobs.distributed && (pipeline || findTarget(target.id) === target))
    return streamQueuedBatch(app, { id, owner: user, target, settings, files, workDir, pipeline, clientJobId, detached }, reply);

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
    client_job_id: clientJobId ?? null,
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

  const res = reply.raw;
  const controller = new AbortController();
  // Before the answer starts, 'close' means the client went away; after, it may also mean the end.
  const onClientGone = () => {
    if (!res.writableFinished) controller.abort();
  };
  if (!detached) res.on('close', onClientGone);
  let stored = false;
  const done = (async () => {
    const progress = batchProgress(store.db, jobs.events, id);
    const items = await runBatchItems({
      id,
      target,
      settings,
      files: files.map((f) => ({ path: f.path, name: f.name, size: f.size })),
      refused,
      workDir,
      queue: jobs.queue,
      config,
      signal: controller.signal,
      onItem: progress.onItem,
    });
    await progress.flushed();
    if (controller.signal.aborted) throw new KilnError('CANCELLED', 'The batch was cancelled.');
    const counts = countItems(items);
    const out = detached ? await writeBatchArchive(path.join(workDir, 'out'), id, target.id, items) : undefined;
    // With object storage a kept archive goes to the bucket, as any job's output does.
    const storeOutput = out && outputStep(app.kiln.storage, id);
    if (storeOutput) stored = true;
    // The job is completed and the outcome known before the first byte of the answer: its headers carry
    // the counts, and a client holding the whole ZIP always finds the job done.
    await finishJob(store.db, id, {
      status: 'completed',
      progress: 100,
      stage: 'done',
      finished_at: Date.now(),
      processed_size: out?.size ?? items.reduce((a, m) => a + (m.size ?? 0), 0),
      output_path: out ? (storeOutput ? await storeOutput(out.path, out.name, 'application/zip') : out.path) : null,
      output_name: out?.name ?? null,
      result: JSON.stringify({ data: counts }),
    });
    const row = await getJob(store.db, id);
    if (row) jobs.ended(row);
    // The same result as GET /api/v1/jobs/:id and a late stream's event: the counts are in result.data.
    jobs.events.publish(id, { type: 'completed', result: row ? jobResult(row) : { jobId: id, data: counts } });
    if (!detached) await sendZip(reply, target, id, items);
  })();
  const finished = done
    .catch(async (e) => {
      await jobs.fail(id, workDir, e);
      if (detached) return;
      if (res.headersSent) return void res.destroy();
      // Nothing sent yet: the client (if still there) gets the error as recorded, with its status.
      const row = await getJob(store.db, id);
      if (row) throw recordedFailure(row);
      throw toKilnError(e);
    })
    .finally(async () => {
      res.off('close', onClientGone);
      // A detached batch keeps its archive (out/) until outputTtlHours; the inputs and items go now.
      if (detached && !stored) for (const d of ['in', 'items']) await rm(path.join(workDir, d), { recursive: true, force: true });
      else await rm(workDir, { recursive: true, force: true });
    });
  jobs.track(id, controller, finished);
  if (!detached) return finished;
  finished.catch(() => {});
  const answer = await syncAnswer(jobs, id, 0);
  return reply
    .code(answer.status)
    .headers({ ...answer.headers, 'preference-applied': 'respond-async' })
    .send(answer.body);
}

/** The ZIP answer: X-Job-Id and the counts in its headers, then the archive. */
async function sendZip(reply: FastifyReply, target: Target, id: string, items: ManifestItem[]): Promise<void> {
  const counts = countItems(items);
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, batchZipHeaders(target.id, id, counts));
  const zip = batchArchive(id, target.id, items);
  const sent = new Promise<void>((resolve, reject) => {
    zip.outputStream.on('error', reject);
    res.on('error', reject);
    res.on('close', resolve);
    zip.outputStream.on('end', resolve);
  });
  zip.outputStream.pipe(res);
  await sent;
}

const MISROUTED_BATCH_DOC: RouteDoc = {
  operationId: 'misroutedBatch',
  tags: ['catalog'],
  summary: 'Any other batch route: 404 that says why (no batch for this tool, or the right route).',
  parameters: [sectionParam, toolIdParam],
  response: errorResponses([401, 404]),
};
