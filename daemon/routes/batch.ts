/**
 * POST /api/v1/tools/<section>/<tool_id>/batch: repeated `files` + `settings`. Inputs stream to disk and
 * are checked from their bytes (refused ones take no queue slot; all refused → 415, no job), each runs
 * as its own queued run, then the ZIP streams back with X-Job-Id and the counts in X-Batch-Total,
 * X-Batch-Succeeded and X-Batch-Failed, the outputs in input order, and a manifest.json listing every
 * input with its output name or its error. The answer starts once every run has ended: headers cannot
 * be sent after the body, and a client must see failures without unzipping. With Prefer: respond-async
 * the answer is a 202 at once and the archive becomes the job's output (GET /api/v1/download/…).
 */
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type ErrorCode, KilnError, toKilnError } from '../../src/core/errors.js';
import { checkInputs, runTool, validateRequest } from '../../src/tools/run-tool.js';
import { requireUser } from '../auth/authenticate.js';
import { requirePermission } from '../auth/permissions.js';
import { assembleSettings, readMultipart, type UploadedPart } from '../http/uploads.js';
import { batchArchive, countItems, type ManifestItem, writeBatchArchive } from '../jobs/batch-archive.js';
import { preferredWait, syncAnswer } from '../jobs/answer.js';
import { jobError, jobResult, redactSettings } from '../jobs/records.js';
import { baseToolId, findTarget, routeOf, targets, type Target } from '../jobs/targets.js';
import { finishJob, getJob, insertJob, updateJob } from '../store/jobs.js';
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

/** Runs a batch of `target`, or of the target named by the request's text fields (ad-hoc pipelines). */
export async function runBatch(
  app: FastifyInstance,
  targetOrResolve: Target | ((fields: Map<string, string>) => Target),
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
  try {
    if (!request.isMultipart())
      throw new KilnError(
        'VALIDATION_ERROR',
        'Send multipart/form-data with the inputs in repeated "files" fields and the settings as JSON in "settings".',
      );
    const parsed = await readMultipart(request, inDir, { maxFiles: MAX_BATCH_FILES });
    target = typeof targetOrResolve === 'function' ? targetOrResolve(parsed.fields) : targetOrResolve;
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
    clientJobId = parsed.fields.get('clientJobId')?.slice(0, 200) || undefined;
    refused = await refusedInputs(target, files, config.allowPostScript);
  } catch (e) {
    await rm(workDir, { recursive: true, force: true });
    throw e;
  }

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

  // Prefer: respond-async: 202 now; the archive is kept as the job's output and downloaded later.
  // (wait=N is not honoured here: a batch answers with its archive or not at all.)
  const detached = preferredWait(request.headers.prefer, 0).applied === 'respond-async';
  const res = reply.raw;
  const controller = new AbortController();
  // Before the answer starts, 'close' means the client went away; after, it may also mean the end.
  const onClientGone = () => {
    if (!res.writableFinished) controller.abort();
  };
  if (!detached) res.on('close', onClientGone);
  // On cancel the queue entries are dropped too, so waiting items end at once.
  controller.signal.addEventListener(
    'abort',
    () => {
      for (let i = 0; i < files.length; i++) jobs.queue.cancel(`${id}:${i}`);
    },
    { once: true },
  );

  const done = (async () => {
    const items = await runItems(app, { id, target, settings, files, refused, workDir, signal: controller.signal });
    if (controller.signal.aborted) throw new KilnError('CANCELLED', 'The batch was cancelled.');
    const counts = countItems(items);
    const out = detached ? await writeBatchArchive(path.join(workDir, 'out'), id, target.id, items) : undefined;
    // The job is completed and the outcome known before the first byte of the answer: its headers carry
    // the counts, and a client holding the whole ZIP always finds the job done.
    await finishJob(store.db, id, {
      status: 'completed',
      progress: 100,
      stage: 'done',
      finished_at: Date.now(),
      processed_size: out?.size ?? items.reduce((a, m) => a + (m.size ?? 0), 0),
      output_path: out?.path ?? null,
      output_name: out?.name ?? null,
      result: JSON.stringify({ data: counts }),
    });
    const row = await getJob(store.db, id);
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
      const err = row ? jobError(row) : toKilnError(e).toJSON().error;
      throw new KilnError(err.code as ErrorCode, err.message, { details: err.details, reason: err.reason });
    })
    .finally(async () => {
      res.off('close', onClientGone);
      // A detached batch keeps its archive (out/) until outputTtlHours; the inputs and items go now.
      if (detached) for (const d of ['in', 'items']) await rm(path.join(workDir, d), { recursive: true, force: true });
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

/**
 * Runs every accepted input as its own queued run (refused ones take no slot) and returns the manifest
 * items in input order; progress goes out as items end and is written in order.
 */
async function runItems(
  app: FastifyInstance,
  b: {
    id: string;
    target: Target;
    settings: Record<string, unknown>;
    files: UploadedPart[];
    refused: Map<number, ManifestItem['error']>;
    workDir: string;
    signal: AbortSignal;
  },
): Promise<ManifestItem[]> {
  const { jobs, config, store } = app.kiln;
  const { id, files } = b;
  const items: ManifestItem[] = new Array(files.length);
  let finished = 0;
  let writes = Promise.resolve();
  const ended = () => {
    finished++;
    const percent = Math.round((finished / files.length) * 100);
    const stage = `${finished}/${files.length}`;
    jobs.events.publish(id, { type: 'progress', percent, stage });
    // Chained so an older progress write never lands after a newer one (or after the final record).
    writes = writes.then(() => updateJob(store.db, id, { progress: percent, stage }).catch(() => {}));
  };
  await Promise.all(
    files.map(async (f, i) => {
      const error = b.refused.get(i);
      if (error) {
        items[i] = { input: f.name, error };
        return ended();
      }
      const itemDir = path.join(b.workDir, 'items', String(i));
      try {
        await mkdir(itemDir, { recursive: true });
        const outcome = await jobs.queue.run(`${id}:${i}`, (signal) =>
          runTool(b.target.tool, { files: [{ path: f.path, name: f.name, size: f.size }], extra: {} }, b.settings, {
            workDir: itemDir,
            dataDir: config.dataDir,
            signal: AbortSignal.any([signal, b.signal]),
            validated: true,
            allowPostScript: config.allowPostScript,
          }),
        );
        const item: ManifestItem = { input: f.name };
        if (outcome.output) {
          item.output = outcome.output.name;
          item.path = outcome.output.path;
          item.size = outcome.processedSize;
        }
        if (outcome.data !== undefined) item.data = outcome.data;
        items[i] = item;
      } catch (e) {
        items[i] = { input: f.name, error: toKilnError(e).toJSON().error };
      }
      ended();
    }),
  );
  await writes;
  return items;
}

/** The ZIP answer: X-Job-Id and the counts in its headers, then the archive. */
async function sendZip(reply: FastifyReply, target: Target, id: string, items: ManifestItem[]): Promise<void> {
  const counts = countItems(items);
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    'content-type': 'application/zip',
    'content-disposition': contentDisposition(`${target.id}-batch.zip`),
    'x-job-id': id,
    'x-batch-total': String(counts.total),
    'x-batch-succeeded': String(counts.succeeded),
    'x-batch-failed': String(counts.failed),
    'cache-control': 'no-store',
  });
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
