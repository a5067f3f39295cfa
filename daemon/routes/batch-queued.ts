/**
 * A batch in scaled mode: queued like any run, so the worker of any instance runs it and stores its
 * ZIP (outputs in input order); this response waits for the job (progress from any instance's
 * /api/v1/jobs/<id>/progress; the client finds the job by its clientJobId meanwhile), then sends
 * X-Job-Id and the counts in X-Batch-Total/Succeeded/Failed and streams the ZIP. A failed or cancelled
 * batch is answered with its recorded error; with Prefer: respond-async the answer is a 202 at once.
 * A client that goes away before the answer cancels the batch, wherever it runs.
 */
import { pipeline } from 'node:stream/promises';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { type ErrorCode, KilnError } from '../../src/core/errors.js';
import type { AuthUser } from '../auth/authenticate.js';
import type { UploadedPart } from '../http/uploads.js';
import type { BatchCounts } from '../jobs/batch-archive.js';
import { BATCH_ZIP_TYPE, batchZipName } from '../jobs/batch-job.js';
import { syncAnswer } from '../jobs/answer.js';
import { jobError } from '../jobs/records.js';
import type { Target } from '../jobs/targets.js';
import { readOutput } from '../storage/job-files.js';
import { getJob, isFinal, type JobRow } from '../store/jobs.js';
import { contentDisposition } from './download.js';

/** How long the response waits for a queued batch: as long as a client keeps the connection. */
const WAIT_MS = 24 * 3_600_000;

/** The headers of a batch's ZIP answer: the job and the outcome, so a client sees failures without unzipping. */
export function batchZipHeaders(targetId: string, id: string, counts: BatchCounts): Record<string, string> {
  return {
    'content-type': BATCH_ZIP_TYPE,
    'content-disposition': contentDisposition(batchZipName(targetId)),
    'x-job-id': id,
    'x-batch-total': String(counts.total),
    'x-batch-succeeded': String(counts.succeeded),
    'x-batch-failed': String(counts.failed),
    'cache-control': 'no-store',
  };
}

/** A job that did not complete, as the error it recorded (its code decides the status). */
export function recordedFailure(row: JobRow): KilnError {
  const err = jobError(row);
  return new KilnError(err.code as ErrorCode, err.message, { details: err.details, reason: err.reason });
}

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
    clientJobId?: string;
    /** Prefer: respond-async: 202 now, the archive downloaded later. */
    detached: boolean;
  },
  reply: FastifyReply,
): Promise<FastifyReply | undefined> {
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
    clientJobId: b.clientJobId,
  });
  if (b.detached) {
    const answer = await syncAnswer(jobs, b.id, 0);
    return reply
      .code(answer.status)
      .headers({ ...answer.headers, 'preference-applied': 'respond-async' })
      .send(answer.body);
  }
  const res = reply.raw;
  let ended = false;
  const onClientGone = () => {
    if (ended || res.writableFinished) return;
    void getJob(app.kiln.store.db, b.id)
      .then((row) => (row && !isFinal(row.status) ? jobs.cancel(row) : undefined))
      .catch(() => {});
  };
  res.on('close', onClientGone);
  let row: JobRow | undefined;
  try {
    row = await jobs.wait(b.id, WAIT_MS);
  } finally {
    ended = true;
    res.off('close', onClientGone);
  }
  if (!row) throw new KilnError('TIMEOUT', `The batch did not end within ${WAIT_MS / 3_600_000} hours; see GET /api/v1/jobs/${b.id}.`);
  if (row.status !== 'completed') throw recordedFailure(row);
  if (!row.output_path) throw new KilnError('INTERNAL', 'The batch completed without its archive.');
  const counts = (JSON.parse(row.result ?? '{}') as { data?: BatchCounts }).data ?? { total: b.files.length, succeeded: 0, failed: 0 };
  // Opened before the first byte: a missing archive is still answered as an error.
  const archive = await readOutput(storage, row.output_path);
  reply.hijack();
  res.writeHead(200, batchZipHeaders(b.target.id, b.id, counts));
  await pipeline(archive, res).catch(() => res.destroy());
  return undefined;
}
