/**
 * The per-user job storage quota (userQuotaMb: settings, team, USER_QUOTA_MB): what a user's jobs hold on disk until the sweeper
 * removes them — the outputs of finished jobs (their recorded size), the work directories of queued and
 * running ones (measured), and uploads still arriving at this instance. An upload that would pass the
 * quota is cut and answered 413.
 *
 * Parallel uploads of one user must not each see the same free room (issue #21): every chunk is
 * checked against the stored bytes plus all of the user's uploads in flight at that moment (one
 * synchronous check, so nothing interleaves), and an upload stays in flight until its answer is sent —
 * by then its job is recorded and counted. Counting it twice meanwhile errs on the safe side. Uploads
 * on other instances are seen once their job is recorded.
 */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { KilnError } from '../../src/core/errors.js';
import { runCompiled } from '../store/compiled.js';
import { UNFINISHED } from '../store/jobs.js';
import type { Database } from '../store/schema.js';

const MB = 1048576;
/**
 * Bodies declared at most this large skip the reading before their bytes: confirm() reads once they
 * are in, and taking in a body this small before refusing it costs less than a second reading (two
 * aggregate queries and a walk of the running jobs' directories, about a tenth of a small request).
 */
const CHECK_AFTER_BYTES = 1 * MB;
/** Bytes of uploads in progress per user, in this process. */
const inFlight = new Map<string, number>();
/** The charge of a request, released when its answer has been sent (installQuotaRelease). */
const held = new WeakMap<FastifyRequest, QuotaCharge>();

async function du(dir: string): Promise<number> {
  let total = 0;
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) total += await du(p);
    else if (e.isFile())
      total += await stat(p).then(
        (s) => s.size,
        () => 0,
      );
  }
  return total;
}

/** What the user's jobs hold on disk, uploads in flight not included. */
export async function jobStorageUsed(db: Kysely<Database>, userId: string): Promise<number> {
  // Ended jobs' outputs still held (the sweep removes them after outputTtlHours, long before the records
  // go): one row the database keeps by triggers (migration 0800), however many a user holds. A walk only
  // of the few jobs still queued or running. Both read on every upload, compiled once (compiled.ts).
  const done = await runCompiled(db, 'job_held_bytes.read', [userId], () =>
    db.selectFrom('job_held_bytes').select('bytes').where('owner_id', '=', userId),
  );
  const open = await runCompiled(db, 'jobs.open-work-dirs', [userId, ...UNFINISHED], () =>
    db.selectFrom('jobs').select('work_dir').where('owner_id', '=', userId).where('status', 'in', UNFINISHED),
  );
  let used = Number(done.rows[0]?.bytes ?? 0);
  for (const r of open.rows) used += r.work_dir ? await du(r.work_dir) : 0;
  return used;
}

export interface QuotaCharge {
  /** Counts `n` more bytes of this upload; throws LIMIT_EXCEEDED past the quota. */
  add(n: number): void;
  /**
   * The upload is complete: checks it once more against what the user's jobs hold now. add() counts
   * against the jobs as they were when the upload began; a parallel upload of the same user whose job
   * finished meanwhile has left the in-flight count (answered) for the stored one, which that reading
   * did not see — under load, two of eight parallel uploads passed a quota with room for one.
   */
  confirm(): Promise<void>;
  /** The upload has ended (its job recorded and answered, or failed): stop counting it as in flight. */
  release(): void;
}

/**
 * `declaredBytes`: the body's Content-Length, when it has one. A large or undeclared body is checked
 * before its bytes come (a user at the quota is refused without sending 1 GB first), a small one only
 * at confirm().
 */
export async function chargeQuota(
  db: Kysely<Database>,
  userId: string | undefined,
  quotaMb: number,
  declaredBytes?: number,
): Promise<QuotaCharge> {
  if (!userId || quotaMb <= 0) return { add() {}, async confirm() {}, release() {} };
  const limit = quotaMb * MB;
  const small = declaredBytes !== undefined && Number.isSafeInteger(declaredBytes) && declaredBytes <= CHECK_AFTER_BYTES;
  // A small body's add() counts against its own and the in-flight bytes alone until confirm() reads.
  let stored = small ? 0 : await jobStorageUsed(db, userId);
  let mine = 0;
  let released = false;
  const over = (used: number) =>
    new KilnError(
      'LIMIT_EXCEEDED',
      `This upload would pass your job storage quota of ${quotaMb} MB (USER_QUOTA_MB): ${Math.round(used / MB)} MB are held by your earlier jobs and uploads until they expire (outputTtlHours). Delete finished jobs, or wait.`,
      { details: { quotaMb, usedMb: Math.round(used / MB) } },
    );
  if (stored + (inFlight.get(userId) ?? 0) >= limit) throw over(stored + (inFlight.get(userId) ?? 0));
  return {
    add(n) {
      const others = inFlight.get(userId) ?? 0;
      mine += n;
      inFlight.set(userId, others + n);
      if (stored + others + n > limit) throw over(stored + others - (mine - n));
    },
    async confirm() {
      // On SQLite the reading is synchronous underneath: no answer (and release) of another upload
      // can come between it and the sum below.
      stored = await jobStorageUsed(db, userId);
      const others = (inFlight.get(userId) ?? 0) - mine;
      if (stored + others + mine > limit) throw over(stored + others);
    },
    release() {
      if (released) return;
      released = true;
      const left = (inFlight.get(userId) ?? 0) - mine;
      if (left > 0) inFlight.set(userId, left);
      else inFlight.delete(userId);
    },
  };
}

/** Keeps a finished upload counted until the request's answer is sent (or its connection closes). */
export function holdUntilAnswered(request: FastifyRequest, charge: QuotaCharge): void {
  held.set(request, charge);
}

export function installQuotaRelease(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    // 'close' comes after the answer is sent and also when the client goes away: always, once.
    reply.raw.once('close', () => held.get(request)?.release());
  });
}
