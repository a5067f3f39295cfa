/**
 * Job rows in and out: what a record keeps (settings without secrets, how a run failed) and the views
 * built from it (the run result of HTTP 200 and SSE, the error, the public JSON of GET /jobs).
 */
import type { KilnError } from '../../src/core/errors.js';
import type { JobRow } from '../store/jobs.js';

/** Settings that must not be kept in job records (passwords for protect/unlock-pdf and the like). */
const SECRET_SETTING = /password|secret|passphrase|token/i;

export function redactSettings(settings: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(settings).map(([k, v]) => [k, SECRET_SETTING.test(k) && v !== undefined && v !== '' ? '[redacted]' : v]),
  );
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
