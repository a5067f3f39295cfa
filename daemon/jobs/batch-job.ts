/**
 * A batch taken from the shared queue (scaled mode): run on whichever instance's worker took it, its
 * ZIP written to a file and stored like any job output (the bucket, or the shared directory), so the
 * instance that took the request streams it back when it is done and any instance serves it again at
 * /api/v1/download/<id>/<tool>-batch.zip.
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { KilnError } from '../../src/core/errors.js';
import type { JobQueue } from '../queue/queue.js';
import { finishJob, getJob, type JobRow } from '../store/jobs.js';
import { batchArchiveName, countItems, writeBatchArchive } from './batch-archive.js';
import { batchProgress, runBatchItems } from './batch-run.js';
import { jobResult } from './records.js';
import { claim, type RunDeps, type RunSpec } from './run.js';

export const BATCH_ZIP_TYPE = 'application/zip';

export function batchZipName(targetId: string): string {
  return batchArchiveName(targetId);
}

/** Runs the batch; the completed row, or undefined when it was not run (cancelled before, or at the last moment). */
export async function executeBatch(deps: RunDeps & { queue: JobQueue }, req: RunSpec, signal: AbortSignal): Promise<JobRow | undefined> {
  if (!(await claim(deps, req.id))) return undefined;
  const progress = batchProgress(deps.db, deps.events, req.id);
  const items = await runBatchItems({
    id: req.id,
    target: req.target,
    settings: req.settings,
    files: req.inputs.files,
    workDir: req.workDir,
    queue: deps.queue,
    config: deps.config,
    signal,
    onItem: progress.onItem,
  });
  await progress.flushed();
  if (signal.aborted) throw new KilnError('CANCELLED', 'The batch was cancelled.');
  // The outputs in input order, whatever order they ended in.
  const out = await writeBatchArchive(path.join(req.workDir, 'out'), req.id, req.target.id, items);
  const name = out.name;
  const file = out.path;
  await rm(path.join(req.workDir, 'items'), { recursive: true, force: true });
  await rm(path.join(req.workDir, 'in'), { recursive: true, force: true });
  const counts = countItems(items);
  const outputPath = req.storeOutput ? await req.storeOutput(file, name, BATCH_ZIP_TYPE) : file;
  const patch = {
    status: 'completed' as const,
    progress: 100,
    stage: 'done',
    finished_at: Date.now(),
    output_path: outputPath,
    output_name: name,
    content_type: BATCH_ZIP_TYPE,
    processed_size: out.size,
    result: JSON.stringify({ data: counts }),
  };
  if (!(await finishJob(deps.db, req.id, patch))) {
    await rm(req.workDir, { recursive: true, force: true });
    return undefined;
  }
  const row = await getJob(deps.db, req.id);
  // The same result as GET /api/v1/jobs/:id and a late stream's event: the counts are in result.data.
  if (row) deps.events.publish(req.id, { type: 'completed', result: jobResult(row) });
  return row;
}
