/**
 * Job rows in and out: what a record keeps (settings without secrets, how a run failed) and the views
 * built from it (the run result of HTTP 200 and SSE, the error, the public JSON of GET /jobs).
 */
import type { KilnError } from '../../src/core/errors.js';
import type { ToolInputs } from '../../src/core/tool.js';
import type { JobRow } from '../store/jobs.js';
import { baseToolId, type Target } from './targets.js';

/** Settings that must not be kept in job records (passwords for protect/unlock-pdf and the like). */
const SECRET_SETTING = /password|secret|passphrase|token/i;

export function redactSettings(settings: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(settings).map(([k, v]) => [k, SECRET_SETTING.test(k) && v !== undefined && v !== '' ? '[redacted]' : v]),
  );
}

/** What a submitted job's record is made from (JobService.submit). */
export interface NewJob {
  id: string;
  owner: { id: string };
  target: Target;
  settings: Record<string, unknown>;
  inputs: ToolInputs;
  workDir: string;
  clientJobId?: string;
  batch?: boolean;
}

/** The record of a job just submitted: queued, owned by `instanceId` until a worker claims it. */
export function newJobRow(req: NewJob, instanceId: string): JobRow {
  return {
    id: req.id,
    owner_id: req.owner.id,
    tool: req.target.id,
    base_tool: baseToolId(req.target),
    kind: req.batch ? 'batch' : 'run',
    settings: JSON.stringify(redactSettings(req.settings)),
    status: 'queued',
    progress: 0,
    stage: 'queued',
    result: null,
    error: null,
    client_job_id: req.clientJobId ?? null,
    instance_id: instanceId,
    work_dir: req.workDir,
    output_path: null,
    output_name: null,
    content_type: null,
    original_size: req.batch ? req.inputs.files.reduce((n, f) => n + f.size, 0) : null,
    processed_size: null,
    created_at: Date.now(),
    started_at: null,
    finished_at: null,
  };
}

/** Where the output downloads; none once the sweep removed it (outputTtlHours). */
export function downloadUrl(row: Pick<JobRow, 'id' | 'output_name' | 'output_path'>): string | undefined {
  return row.output_name && row.output_path ? `/api/v1/download/${row.id}/${encodeURIComponent(row.output_name)}` : undefined;
}

/** The result body of a finished run (HTTP 200 and the SSE `completed` event). */
export function jobResult(row: JobRow): Record<string, unknown> {
  const r: Record<string, unknown> = {
    jobId: row.id,
    downloadUrl: downloadUrl(row),
    originalSize: Number(row.original_size ?? 0),
    processedSize: Number(row.processed_size ?? 0),
  };
  const stored = row.result ? (JSON.parse(row.result) as { data?: unknown; extra?: Record<string, unknown> }) : {};
  if (stored.data !== undefined) r.data = stored.data;
  return { ...r, ...stored.extra };
}

export function jobError(row: JobRow): { code: string; message: string; details?: unknown; reason?: string } {
  return row.error ? JSON.parse(row.error) : { code: 'INTERNAL', message: 'The job failed.' };
}

/** The public JSON view of a job. */
export function jobView(row: JobRow): Record<string, unknown> {
  const ts = (n: number | null) => (n === null ? null : new Date(Number(n)).toISOString());
  return {
    jobId: row.id,
    tool: row.tool,
    baseTool: row.base_tool,
    kind: row.kind,
    ownerId: row.owner_id,
    status: row.status,
    progress: { percent: row.progress, stage: row.stage },
    settings: JSON.parse(row.settings),
    clientJobId: row.client_job_id,
    result: row.status === 'completed' ? jobResult(row) : null,
    error: row.status === 'failed' || row.status === 'cancelled' ? jobError(row) : null,
    outputName: row.output_name,
    contentType: row.content_type,
    originalSize: row.original_size === null ? null : Number(row.original_size),
    processedSize: row.processed_size === null ? null : Number(row.processed_size),
    createdAt: ts(row.created_at),
    startedAt: ts(row.started_at),
    finishedAt: ts(row.finished_at),
  };
}

/** The row patch that records a failed (or cancelled) end. */
export function failureRecord(err: KilnError): Partial<JobRow> & { status: 'failed' | 'cancelled' } {
  return {
    status: err.code === 'CANCELLED' ? 'cancelled' : 'failed',
    error: JSON.stringify(err.toJSON().error),
    stage: err.code === 'CANCELLED' ? 'cancelled' : 'failed',
    output_path: null,
    output_name: null,
    finished_at: Date.now(),
  };
}
