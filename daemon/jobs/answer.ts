/** How a run route answers: within the synchronous window (or what the client prefers), or 202 to follow. */
import { KilnError, type ErrorCode } from '../../src/core/errors.js';
import type { JobRow } from '../store/jobs.js';
import { jobError, jobResult } from './records.js';

/**
 * How long a run route waits for its job: the server's synchronous window, or what the client prefers
 * (RFC 7240): `Prefer: respond-async` answers 202 at once, `Prefer: wait=N` waits at most N seconds.
 * `applied` is the preference honoured, for the Preference-Applied header.
 */
export function preferredWait(prefer: string | string[] | undefined, defaultMs: number): { waitMs: number; applied?: string } {
  // RFC 7240 §2: preference = token [ "=" word ] *( ";" parameter ), word a token or a quoted string.
  // Parameters are dropped and a quoted value unquoted: `wait="5"` and `wait=5; x` fell back to the default.
  const tokens = [prefer ?? []]
    .flat()
    .join(',')
    .split(',')
    .map((t) =>
      t
        .split(';', 1)[0]!
        .trim()
        .toLowerCase()
        .replace(/=\s*"([^"]*)"$/, '=$1'),
    );
  const wait = tokens.map((t) => /^wait\s*=\s*(\d{1,6})$/.exec(t)).find(Boolean);
  const waitS = wait ? Number(wait[1]) : undefined;
  const waitMs = (s: number) => Math.min(s * 1000, defaultMs > 0 ? Math.max(defaultMs, 600_000) : 600_000);
  if (tokens.includes('respond-async')) {
    // RFC 7240 §4.3: `respond-async, wait=10` asks for an asynchronous answer only if the run takes longer
    // than 10 s. It was a 202 at once, so a client sending the RFC's own example never got a 200.
    return waitS === undefined
      ? { waitMs: 0, applied: 'respond-async' }
      : { waitMs: waitMs(waitS), applied: `respond-async, wait=${waitS}` };
  }
  if (waitS !== undefined) return { waitMs: waitMs(waitS), applied: `wait=${waitS}` };
  return { waitMs: defaultMs };
}

/**
 * The Preference-Applied header of a run's answer: respond-async is named only on a 202 (a run that
 * ended within `respond-async, wait=N` was answered synchronously: only its wait applied).
 */
export function preferenceApplied(applied: string | undefined, status: number): Record<string, string> {
  const names = (applied ?? '').split(', ').filter((p) => p && (status === 202 || p !== 'respond-async'));
  return names.length ? { 'preference-applied': names.join(', ') } : {};
}

/**
 * The answer of a run route: waits up to the synchronous window, then 200 with the result, the job's own
 * error, or 202 `{jobId, async: true, statusUrl, eventsUrl}` (and Location) for the caller to follow.
 */
export async function syncAnswer(
  jobs: { wait(id: string, ms: number): Promise<JobRow | undefined> },
  id: string,
  waitMs: number,
): Promise<{ status: 200 | 202; body: Record<string, unknown>; headers: Record<string, string> }> {
  const done = await jobs.wait(id, waitMs);
  if (!done) {
    const statusUrl = `/api/v1/jobs/${id}`;
    return {
      status: 202,
      body: { jobId: id, async: true, statusUrl, eventsUrl: `${statusUrl}/progress` },
      headers: { location: statusUrl },
    };
  }
  if (done.status === 'completed') return { status: 200, body: jobResult(done), headers: {} };
  const err = jobError(done);
  throw new KilnError(err.code as ErrorCode, err.message, { details: err.details, reason: err.reason });
}
