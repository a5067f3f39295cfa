/**
 * A batch in scaled mode: queued like any run, so the worker of any instance runs it and stores its
 * ZIP; this response sends the headers at once (X-Job-Id first, progress from any instance's
 * /api/v1/jobs/<id>/progress) and streams the ZIP when the job has completed. A client that goes away
 * cancels the batch, wherever it runs.
 */
import { pipeline } from 'node:stream/promises';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AuthUser } from '../auth/authenticate.js';
import type { UploadedPart } from '../http/uploads.js';
import { BATCH_ZIP_TYPE, batchZipName } from '../jobs/batch-job.js';
import type { Target } from '../jobs/targets.js';
import { openOutput } from '../storage/job-files.js';
import { getJob, isFinal } from '../store/jobs.js';
import { contentDisposition } from './download.js';

/** How long the response waits for a queued batch: as long as a client keeps the connection. */
const WAIT_MS = 24 * 3_600_000;

export async function streamQueuedBatch(
  app: FastifyInstance,
  b: {
    id: string;
    owner: AuthUser;
    target: Target;
    settings: Record<string, unknown>;
    files: UploadedPart[];
    workDir: string;
    pipeline?: { raw: unknown; name?: string };
  },
  reply: FastifyReply,
): Promise<void> {
  const { jobs, storage } = app.kiln;
  await jobs.submit({
    id: b.id,
    owner: b.owner,
    target: b.target,
    settings: b.settings,
    inputs: { files: b.files.map((f) => ({ path: f.path, name: f.name, size: f.size })), extra: {} },
    workDir: b.workDir,
    batch: true,
    pipeline: b.pipeline,
  });
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    'content-type': BATCH_ZIP_TYPE,
    'content-disposition': contentDisposition(batchZipName(b.target.id)),
    'x-job-id': b.id,
    'cache-control': 'no-store',
  });
  res.flushHeaders();
  let ended = false;
  const onClientGone = () => {
    if (ended || res.writableFinished) return;
    void getJob(app.kiln.store.db, b.id)
      .then((row) => (row && !isFinal(row.status) ? jobs.cancel(row) : undefined))
      .catch(() => {});
  };
  res.on('close', onClientGone);
  try {
    const row = await jobs.wait(b.id, WAIT_MS);
    ended = true;
    if (row?.status !== 'completed' || !row.output_path) {
      res.destroy();
      return;
    }
    await pipeline(await openOutput(storage, row.output_path), res);
  } catch {
    res.destroy();
  } finally {
    ended = true;
    res.off('close', onClientGone);
  }
}
