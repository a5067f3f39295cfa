/** Job records: every HTTP run is one row, so results and failures survive restarts. */
import type { Kysely } from 'kysely';
import { runCompiled } from './compiled.js';
import type { Database, JobStatus, JobsTable } from './schema.js';

export type JobRow = JobsTable;

export const FINAL_STATUSES: readonly JobStatus[] = ['completed', 'failed', 'cancelled'];

export function isFinal(s: JobStatus): boolean {
  return FINAL_STATUSES.includes(s);
}

export const UNFINISHED: JobStatus[] = ['queued', 'running'];

// The queries every request runs go through runCompiled (compiled once per shape); a shape is the
// columns written, in order, which fixes the SQL text.

export async function insertJob(db: Kysely<Database>, row: JobRow): Promise<void> {
  const cols = Object.keys(row) as (keyof JobRow)[];
  await runCompiled(db, `jobs.insert:${cols.join()}`, Object.values(row), () => db.insertInto('jobs').values(row));
}

export async function getJob(db: Kysely<Database>, id: string): Promise<JobRow | undefined> {
  const r = await runCompiled(db, 'jobs.get', [id], () => db.selectFrom('jobs').selectAll().where('id', '=', id));
  return r.rows[0];
}

export async function updateJob(db: Kysely<Database>, id: string, patch: Partial<JobRow>): Promise<void> {
  await runCompiled(db, `jobs.update:${Object.keys(patch).join()}`, [...Object.values(patch), id], () =>
    db.updateTable('jobs').set(patch).where('id', '=', id),
  );
}

/** queued → running, unless the job was cancelled (or given up) meanwhile; false when it was not claimed. */
export async function claimJob(db: Kysely<Database>, id: string, instanceId: string, now = Date.now()): Promise<boolean> {
  const set = { status: 'running' as const, started_at: now, stage: 'starting', instance_id: instanceId };
  const r = await runCompiled(db, 'jobs.claim', [...Object.values(set), id, 'queued'], () =>
    db.updateTable('jobs').set(set).where('id', '=', id).where('status', '=', 'queued'),
  );
  return Number(r.numAffectedRows ?? 0) > 0;
}

/**
 * Moves a job to a final state unless it already is in one (cancel and finish may race); the row as
 * it is now, or undefined when it had ended already. One statement (RETURNING, which SQLite and
 * PostgreSQL both have) instead of an update and a read.
 */
export async function finishJobRow(
  db: Kysely<Database>,
  id: string,
  patch: Partial<JobRow> & { status: JobStatus },
): Promise<JobRow | undefined> {
  const r = await runCompiled(db, `jobs.finish:${Object.keys(patch).join()}`, [...Object.values(patch), id, ...UNFINISHED], () =>
    db.updateTable('jobs').set(patch).where('id', '=', id).where('status', 'in', UNFINISHED).returningAll(),
  );
  return r.rows[0];
}

/** Moves a job to a final state unless it already is in one (cancel and finish may race). */
export async function finishJob(db: Kysely<Database>, id: string, patch: Partial<JobRow> & { status: JobStatus }): Promise<boolean> {
  return (await finishJobRow(db, id, patch)) !== undefined;
}

export async function listJobs(
  db: Kysely<Database>,
  opts: { ownerId?: string; limit: number; offset: number; status?: JobStatus; clientJobId?: string },
): Promise<JobRow[]> {
  // Ties on created_at (jobs of one millisecond) go by id, so pages neither repeat nor skip a job.
  let q = db.selectFrom('jobs').selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(opts.limit).offset(opts.offset);
  if (opts.ownerId) q = q.where('owner_id', '=', opts.ownerId);
  if (opts.status) q = q.where('status', '=', opts.status);
  if (opts.clientJobId) q = q.where('client_job_id', '=', opts.clientJobId);
  return q.execute();
}

/** Jobs this instance was running when it stopped. */
export async function unfinishedJobs(db: Kysely<Database>, instanceId: string): Promise<JobRow[]> {
  return db.selectFrom('jobs').selectAll().where('instance_id', '=', instanceId).where('status', 'in', ['queued', 'running']).execute();
}

/** Finished jobs of this instance (their files are on its disk) older than `before`. */
export async function expiredJobs(db: Kysely<Database>, instanceId: string, before: number, limit = 500): Promise<JobRow[]> {
  return db.selectFrom('jobs').selectAll().where('instance_id', '=', instanceId).where('finished_at', '<', before).limit(limit).execute();
}

export async function deleteJob(db: Kysely<Database>, id: string): Promise<void> {
  await db.deleteFrom('jobs').where('id', '=', id).execute();
}
