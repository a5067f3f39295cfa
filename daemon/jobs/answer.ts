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
  if (tokens.includes('respond-async')) return { waitMs: 0, applied: 'respond-async' };
  const wait = tokens.map((t) => /^wait\s*=\s*(\d{1,6})$/.exec(t)).find(Boolean);
  if (wait) {
    const s = Number(wait[1]);
    return { waitMs: Math.min(s * 1000, defaultMs > 0 ? Math.max(defaultMs, 600_000) : 600_000), applied: `wait=${s}` };
  }
  return { waitMs: defaultMs };
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
