/**
 * Keeping the jobs directory and table in order: the instance id that recovery goes by, recovery
 * after a restart, the sweep of expired outputs, job records and sessions, and the scheduler that runs
 * each periodic pass on one instance of a scaled deployment.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { KilnError } from '../../src/core/errors.js';
import { newId } from '../auth/secrets.js';
import { removeJobObjects } from '../storage/job-files.js';
import type { ObjectStorage } from '../storage/storage.js';
import type { Store } from '../store/db.js';
import { deleteJob, expiredJobs, finishJob, getJob, isFinal, unfinishedJobs, updateJob } from '../store/jobs.js';
import { deleteExpiredSessions } from '../store/sessions.js';

/** One instance's (local mode) jobs left unfinished by a restart can never finish: say so and free their files. */
export async function recoverLocal(db: Store['db'], instanceId: string): Promise<number> {
  const rows = await unfinishedJobs(db, instanceId);
  for (const row of rows) {
    if (row.work_dir) await rm(row.work_dir, { recursive: true, force: true });
    await finishJob(db, row.id, {
      status: 'failed',
      error: JSON.stringify(
        new KilnError('INTERNAL', `The daemon stopped while this job was ${row.status}; run it again.`, {
          reason: 'daemon-restarted',
        }).toJSON().error,
      ),
      stage: 'failed',
      finished_at: Date.now(),
    });
  }
  return rows.length;
}

/**
 * Object storage (S3) mode, at start-up: the scratch copies (`<jobsDir>/<id>`) this data dir kept for
 * runs of an earlier process. A process killed mid-run left them, and the instance that then failed the
 * job could only clear its own disk. A directory goes when its job has ended or its instance no longer
 * beats; one without a record (an upload cut off before its job was recorded) once it is older than
 * `orphanMs`. What a live process on the same data dir is running stays. Returns how many went.
 */
export async function removeStaleScratch(
  db: Store['db'],
  jobsDir: string,
  isAlive: (instanceId: string) => Promise<boolean>,
  orphanMs: number,
): Promise<number> {
  let n = 0;
  for (const id of await readdir(jobsDir).catch(() => [] as string[])) {
    const dir = path.join(jobsDir, id);
    const row = await getJob(db, id);
    const stale = row
      ? isFinal(row.status) || !(await isAlive(row.instance_id))
      : Date.now() - ((await stat(dir).catch(() => undefined))?.mtimeMs ?? Date.now()) > orphanMs;
    if (!stale) continue;
    await rm(dir, { recursive: true, force: true });
    n++;
  }
  return n;
}

/**
 * The sweep: outputs of jobs finished before `outputsBefore` are removed (the record stays, without its
 * output), records finished before `recordsBefore` go with whatever files are left, and expired sessions
 * go. In scaled mode the files are on the shared volume, so any instance removes any job's; otherwise
 * only its own. Returns how many jobs it touched.
 */
export async function sweepJobs(
  db: Store['db'],
  opts: { outputsBefore: number; recordsBefore: number; instanceId: string; jobsDir: string; scaled: boolean; storage?: ObjectStorage },
): Promise<number> {
  await deleteExpiredSessions(db);
  const records = opts.scaled
    ? await db.selectFrom('jobs').selectAll().where('finished_at', '<', opts.recordsBefore).limit(500).execute()
    : await expiredJobs(db, opts.instanceId, opts.recordsBefore);
  for (const row of records) {
    await rm(row.work_dir ?? path.join(opts.jobsDir, row.id), { recursive: true, force: true });
    if (opts.storage) await removeJobObjects(opts.storage, row.id);
    await deleteJob(db, row.id);
  }
  let outputs = db
    .selectFrom('jobs')
    .selectAll()
    .where('finished_at', '<', opts.outputsBefore)
    .where('output_path', 'is not', null)
    .limit(500);
  if (!opts.scaled) outputs = outputs.where('instance_id', '=', opts.instanceId);
  const expired = await outputs.execute();
  for (const row of expired) {
    await rm(row.work_dir ?? path.join(opts.jobsDir, row.id), { recursive: true, force: true });
    if (opts.storage) await removeJobObjects(opts.storage, row.id);
    await updateJob(db, row.id, { output_path: null });
  }
  return records.length + expired.length;
}

/**
 * A stable id for this data dir, so restart recovery touches only this instance's jobs. In scaled
 * mode each process adds its own suffix: recovery goes by heartbeats there, and two processes that
 * were given the same DATA_DIR by mistake must still not pass for one.
 */
export async function instanceIdFor(dataDir: string, perProcess = false): Promise<string> {
  const file = path.join(dataDir, 'instance-id');
  let id = (await readFile(file, 'utf8').catch(() => '')).trim();
  if (!id) {
    id = newId();
    await mkdir(dataDir, { recursive: true });
    await writeFile(file, id + '\n');
  }
  return perProcess ? `${id}-${randomBytes(4).toString('hex')}` : id;
}

/**
 * Periodic passes (the job sweep, the reaper, the library's blob sweep) run on one instance at a
 * time: before each pass the instance takes or renews the pass's lease (JobQueue.lead; a Redis key
 * with an expiry in scaled mode). The holder keeps it while it lives; when it stops, the lease lapses
 * after three intervals (or at once on a clean stop) and another instance's next pass takes over.
 */
export class Upkeep {
  private timers: NodeJS.Timeout[] = [];
  private closed = false;

  constructor(
    private readonly lead: (name: string, ttlMs: number) => Promise<boolean>,
    private readonly onError: (e: unknown, name: string) => void,
  ) {}

  every(name: string, ms: number, pass: () => Promise<unknown>): void {
    this.schedule(name, ms, pass, true);
  }

  /** A pass each instance runs for itself, with no lease (it looks at this instance's own records). */
  everyInstance(name: string, ms: number, pass: () => Promise<unknown>): void {
    this.schedule(name, ms, pass, false);
  }

  private schedule(name: string, ms: number, pass: () => Promise<unknown>, leased: boolean): void {
    if (this.closed) return;
    let running = false;
    const timer = setInterval(async () => {
      if (running) return;
      running = true;
      try {
        if (!leased || (await this.lead(name, ms * 3))) await pass();
      } catch (e) {
        this.onError(e, name);
      } finally {
        running = false;
      }
    }, ms);
    timer.unref();
    this.timers.push(timer);
  }

  close(): void {
    this.closed = true;
    for (const t of this.timers.splice(0)) clearInterval(t);
  }
}
