/** Job records: every HTTP run is one row, so results and failures survive restarts. */
import type { Kysely } from 'kysely';
import type { Database, JobStatus, JobsTable } from './schema.js';

export type JobRow = JobsTable;

export const FINAL_STATUSES: readonly JobStatus[] = ['completed', 'failed', 'cancelled'];

export function isFinal(s: JobStatus): boolean {
  return FINAL_STATUSES.includes(s);
}

export async function insertJob(db: Kysely<Database>, row: JobRow): Promise<void> {
  await db.insertInto('jobs').values(row).execute();
}

export async function getJob(db: Kysely<Database>, id: string): Promise<JobRow | undefined> {
  return db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function updateJob(db: Kysely<Database>, id: string, patch: Partial<JobRow>): Promise<void> {
  await db.updateTable('jobs').set(patch).where('id', '=', id).execute();
}

/** Moves a job to a final state unless it already is in one (cancel and finish may race). */
export async function finishJob(db: Kysely<Database>, id: string, patch: Partial<JobRow> & { status: JobStatus }): Promise<boolean> {
  const r = await db.updateTable('jobs').set(patch).where('id', '=', id).where('status', 'in', ['queued', 'running']).executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

export async function listJobs(
  db: Kysely<Database>,
  opts: { ownerId?: string; limit: number; offset: number; status?: JobStatus; clientJobId?: string },
): Promise<JobRow[]> {
  let q = db.selectFrom('jobs').selectAll().orderBy('created_at', 'desc').limit(opts.limit).offset(opts.offset);
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
