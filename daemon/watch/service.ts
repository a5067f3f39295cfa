/**
 * The daemon's watch folders: each configured folder is driven by src/watch/driver.ts on the instance
 * that holds its lease (lock.ts), and every complete file becomes an ordinary job of the folder's owner
 * (listed, followed over SSE, cancellable) running the folder's pipeline. The output is copied into the
 * folder's output path (sub-folders mirrored, never over an existing file); the original moves to
 * .done/ or .failed/ as with `kiln watch`.
 */
import { randomBytes } from 'node:crypto';
import { copyFile, link, rename, rm, stat } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { safeFileName } from '../../src/core/paths.js';
import { KilnError, toKilnError } from '../../src/core/errors.js';
import { isBatchable } from '../../src/core/tool.js';
import { pipelineTool, validatePipeline } from '../../src/pipelines/pipeline.js';
import { openDefinition } from '../library/pipelines.js';
import { validateRequest } from '../../src/tools/run-tool.js';
import { driveFolder, type FolderRunResult } from '../../src/watch/driver.js';
import type { AuthUser } from '../auth/authenticate.js';
import type { JobService } from '../jobs/service.js';
import { jobError, jobResult } from '../jobs/records.js';
import type { Target } from '../jobs/targets.js';
import type { Store } from '../store/db.js';
import { getJob, isFinal, type JobRow } from '../store/jobs.js';
import { findUserById } from '../store/users.js';
import { type FolderLeases, RENEW_MS } from './lock.js';
import { listWatchFolders, type WatchFolderRow, watchScope } from './store.js';
import { makeDir } from '../../src/core/make-dir.js';

interface Running {
  row: WatchFolderRow;
  stop: AbortController;
  done: Promise<unknown>;
  processed: number;
  failed: number;
  lastError?: string;
}

export class WatchFolders {
  private running = new Map<string, Running>();
  /** Why a folder stopped on its own (e.g. it was deleted): shown in its status until it runs again. */
  private stoppedBy = new Map<string, string>();
  private timer?: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly store: Store,
    private readonly jobs: JobService,
    private readonly leases: FolderLeases,
    private readonly log: FastifyBaseLogger,
    private readonly dataKey: Buffer,
  ) {}

  /** Takes the folders this instance can hold now, and checks again every few seconds. */
  async start(): Promise<void> {
    await this.sync();
    const tick = () => {
      this.timer = setTimeout(() => {
        this.sync()
          .catch((e) => this.log.error({ err: e }, 'watch folders: sync failed'))
          .finally(() => !this.closed && tick());
      }, RENEW_MS);
      this.timer.unref();
    };
    tick();
  }

  /** Starts folders that are configured and leased here; stops those deleted or lost. */
  async sync(): Promise<void> {
    if (this.closed) return;
    const rows = await listWatchFolders(this.store.db);
    const ids = new Set(rows.map((r) => r.id));
    for (const [id, r] of this.running) if (!ids.has(id)) await this.stopOne(id, r);
    for (const id of this.stoppedBy.keys()) if (!ids.has(id)) this.stoppedBy.delete(id);
    const disabled = await this.disabledOwners();
    for (const row of rows) {
      let r = this.running.get(row.id);
      // Paused while its owner is disabled: the folder's jobs would run as an account that may do
      // nothing. Its files wait in place and are processed once the owner is enabled again.
      if (disabled.has(row.owner_id)) {
        if (r) await this.stopOne(row.id, r);
        this.stoppedBy.set(row.id, ownerDisabled(row.owner_id));
        continue;
      }
      // A folder that paused itself (runFile saw the owner disabled) is started afresh.
      if (r?.stop.signal.aborted) {
        await this.stopOne(row.id, r);
        r = undefined;
      }
      const held = await this.leases.hold(row.id).catch(() => false);
      if (held && !r) this.startOne(row);
      if (!held && r) await this.stopOne(row.id, r);
    }
  }

  private async disabledOwners(): Promise<Set<string>> {
    const rows = await this.store.db.selectFrom('users').select('id').where('disabled_at', 'is not', null).execute();
    return new Set(rows.map((r) => r.id));
  }

  status(id: string): { active: boolean; processed: number; failed: number; lastError?: string } {
    const r = this.running.get(id);
    const stoppedBy = this.stoppedBy.get(id);
    return r
      ? { active: true, processed: r.processed, failed: r.failed, lastError: r.lastError }
      : { active: false, processed: 0, failed: 0, ...(stoppedBy ? { lastError: stoppedBy } : {}) };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await Promise.all([...this.running].map(([id, r]) => this.stopOne(id, r)));
    await this.leases.close();
  }

  private async stopOne(id: string, r: Running): Promise<void> {
    r.stop.abort();
    this.running.delete(id);
    await r.done.catch(() => {});
    await this.leases.release(id);
  }

  private startOne(row: WatchFolderRow): void {
    const stop = new AbortController();
    const state: Running = { row, stop, done: Promise.resolve(), processed: 0, failed: 0 };
    const { pipeline, steps } = validatePipeline(openDefinition(JSON.parse(row.pipeline), this.dataKey, watchScope(row.id)));
    const name = pipeline.name ?? row.name;
    const tool = pipelineTool(steps, name);
    const target: Target = { id: `pipeline:${name}`, section: tool.section, tool, batchable: isBatchable(tool) };
    state.done = driveFolder({
      inDir: row.path,
      recursive: !!row.recursive,
      keep: !!row.keep,
      // Files that arrived while no instance watched are work too.
      initial: true,
      jobs: 1,
      stableMs: row.stable_ms,
      intervalMs: 1000,
      signal: stop.signal,
      run: (file, rel) => this.runFile(row, target, file, rel, stop),
      onLine: (line) => {
        if (line.ok) state.processed++;
        else {
          state.failed++;
          state.lastError = line.error?.message;
        }
        this.log.info({ watchFolder: row.id, input: line.input, ok: line.ok, jobId: line.jobId, ms: line.ms }, 'watch folder file');
      },
      onError: (message) => {
        state.lastError = message;
        this.log.warn({ watchFolder: row.id }, message);
      },
      onStarted: () => this.stoppedBy.delete(row.id),
    }).catch((e) => {
      // The next sync starts it again (a folder deleted, then made again, is watched again); the
      // same failure each time is logged once.
      const message = (e as Error).message;
      if (this.stoppedBy.get(row.id) !== message) this.log.error({ err: e, watchFolder: row.id }, 'watch folder stopped');
      this.stoppedBy.set(row.id, message);
      this.running.delete(row.id);
    });
    this.running.set(row.id, state);
  }

  private async runFile(row: WatchFolderRow, target: Target, file: string, rel: string, stop: AbortController): Promise<FolderRunResult> {
    const signal = stop.signal;
    const ownerRow = await findUserById(this.store.db, row.owner_id);
    if (!ownerRow) return { ok: false, error: { code: 'NOT_FOUND', message: `The folder's owner ${row.owner_id} no longer exists.` } };
    if (ownerRow.disabled_at != null) {
      // Disabled since the last sync: stop here, before any job. A run stopped by the signal leaves its
      // file in place (driveFolder), and the next sync shows the folder paused.
      this.stoppedBy.set(row.id, ownerDisabled(row.owner_id));
      stop.abort();
      return { ok: false };
    }
    const owner: AuthUser = { id: ownerRow.id, username: ownerRow.username, role: ownerRow.role, teamId: ownerRow.team_id, via: 'service' };
    const { id, workDir, inDir } = await this.jobs.allocate();
    try {
      const name = path.basename(file);
      const dest = path.join(inDir, `0-${safeFileName(name, 'input')}`);
      // A copy: the original stays in the folder until the job has succeeded.
      await copyFile(file, dest);
      const inputs = { files: [{ path: dest, name, size: (await stat(dest)).size }], extra: {} };
      validateRequest(target.tool, inputs, {});
      await this.jobs.submit({ id, owner, target, settings: {}, inputs, workDir, clientJobId: `watch:${row.id}` });
    } catch (e) {
      await rm(workDir, { recursive: true, force: true });
      return { ok: false, error: toKilnError(e).toJSON().error };
    }
    // Stopping (the folder deleted, its lease lost, the daemon shutting down) ends the wait at once: a
    // 30 s wait held DELETE and shutdown until the job ended, and a longer job ran on with no one to
    // deliver its output. The job is cancelled; the original stays for the next watcher.
    const stopped = new Promise<undefined>((resolve) => {
      if (signal.aborted) resolve(undefined);
      else signal.addEventListener('abort', () => resolve(undefined), { once: true });
    });
    let done: JobRow | undefined;
    while (!done && !signal.aborted) done = await Promise.race([this.jobs.wait(id, 30_000), stopped]);
    if (!done) {
      const row = await getJob(this.store.db, id);
      if (!row || !isFinal(row.status)) {
        if (row) await this.jobs.cancel(row).catch(() => {});
        return { ok: false, jobId: id };
      }
      // It ended as the folder stopped: a completed job is still delivered.
      done = row;
    }
    if (done.status !== 'completed' || !done.output_path || !done.output_name) {
      return done.status === 'completed' ? { ok: true, jobId: id } : { ok: false, jobId: id, error: jobError(done) };
    }
    const job = done;
    const outDir = path.join(row.output_path, path.dirname(rel));
    let output: string;
    try {
      output = await deliverInto((tmp) => this.jobs.copyOutput(job, tmp), outDir, job.output_name!);
    } catch (e) {
      // The output folder was removed and replaced by a file, made read-only, or is full: the run is
      // lost to the user, so the original goes to .failed/ with why, rather than stay in the folder
      // unaccounted for (the scan had reported it, and never again).
      const cause = toKilnError(e);
      const message = cause.code === 'INTERNAL' ? (e as Error).message : cause.message;
      return {
        ok: false,
        jobId: id,
        error: new KilnError('UNAVAILABLE', `The output could not be written to ${outDir}: ${message}`).toJSON().error,
      };
    }
    const data = jobResult(done).data as Record<string, unknown> | undefined;
    return { ok: true, jobId: id, output, ...(data ? { data } : {}) };
  }
}

/**
 * Copies a job's output into `dir` under `name` (or name-2, name-3… when taken), atomically and without
 * replacing anything: the copy goes to a private temporary name and is hard-linked to the first free
 * name, which link() claims only if nothing is there. A look and then a rename let two deliveries of one
 * name at once (two folders writing into one directory) both pick it, the second replacing the first.
 * Where the file system has no hard links, the look and the rename remain.
 */
export async function deliverInto(copy: (dest: string) => Promise<void>, dir: string, name: string): Promise<string> {
  await makeDir(dir);
  const ext = path.extname(name);
  const stem = name.slice(0, name.length - ext.length);
  const nameAt = (n: number) => path.join(dir, n === 1 ? name : `${stem}-${n}${ext}`);
  const tmp = path.join(dir, `.${name}.${randomBytes(6).toString('hex')}.kiln-partial`);
  try {
    await copy(tmp);
    for (let n = 1; ; n++) {
      const dest = nameAt(n);
      try {
        await link(tmp, dest);
        return dest;
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'EEXIST') continue;
        if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw e;
        let free = dest;
        for (let m = n + 1; existsSync(free); m++) free = nameAt(m);
        await rename(tmp, free);
        return free;
      }
    }
  } finally {
    await rm(tmp, { force: true });
  }
}

function ownerDisabled(ownerId: string): string {
  return `Paused: the folder's owner ${ownerId} is disabled. Its files wait in place until the account is enabled again.`;
}
