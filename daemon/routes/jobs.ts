/** Job state, listing, cancellation and the progress stream (server-sent events). */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { KilnError } from '../../src/core/errors.js';
import { requireUser } from '../auth/authenticate.js';
import { intQuery } from '../http/query.js';
import { hasPermission } from '../auth/permissions.js';
import type { JobEvent } from '../jobs/events.js';
import { jobError, jobResult, jobView } from '../jobs/records.js';
import { getJob, isFinal, listJobs, type JobRow } from '../store/jobs.js';
import { JOB_STATUSES, type JobStatus } from '../store/schema.js';
import { errorResponses, json, ref } from '../openapi/common.js';
import type { RouteDoc } from '../openapi/route-doc.js';

/** The job if the caller may see it; NOT_FOUND otherwise (never reveals other users' jobs). */
export async function visibleJob(app: FastifyInstance, request: FastifyRequest, jobId: string): Promise<JobRow> {
  const user = requireUser(request);
  const row = /^[0-9a-f]{24}$/.test(jobId) ? await getJob(app.kiln.store.db, jobId) : undefined;
  if (!row || (row.owner_id !== user.id && !hasPermission(request, 'jobs:all'))) throw new KilnError('NOT_FOUND', `No job ${jobId}.`);
  return row;
}

function finalEvent(row: JobRow): JobEvent {
  return row.status === 'completed' ? { type: 'completed', result: jobResult(row) } : { type: 'failed', error: jobError(row) };
}

export async function jobRoutes(app: FastifyInstance): Promise<void> {
  app.get('/api/v1/jobs/:jobId', { schema: GET_JOB_DOC }, async (request) =>
    jobView(await visibleJob(app, request, (request.params as { jobId: string }).jobId)),
  );

  app.get('/api/v1/jobs', { schema: LIST_JOBS_DOC }, async (request) => {
    const user = requireUser(request);
    const q = request.query as { limit?: string; offset?: string; status?: string; clientJobId?: string };
    // As the library's list: a limit or offset that is not a whole number is refused, not read as the default.
    const limit = Math.min(500, intQuery(q.limit, 'limit', 50));
    const offset = intQuery(q.offset, 'offset', 0, 0);
    if (q.status && !(JOB_STATUSES as readonly string[]).includes(q.status))
      throw new KilnError('VALIDATION_ERROR', `status must be one of ${JOB_STATUSES.join(', ')}.`);
    // Admins see every job; others only their own.
    const ownerId = hasPermission(request, 'jobs:all') ? undefined : user.id;
    const rows = await listJobs(app.kiln.store.db, {
      ownerId,
      limit,
      offset,
      status: q.status as JobStatus | undefined,
      clientJobId: q.clientJobId || undefined,
    });
    return { jobs: rows.map(jobView), limit, offset };
  });

  app.post('/api/v1/jobs/:jobId/cancel', { schema: CANCEL_JOB_DOC }, async (request) => {
    const row = await visibleJob(app, request, (request.params as { jobId: string }).jobId);
    return jobView(await app.kiln.jobs.cancel(row));
  });

  app.get('/api/v1/jobs/:jobId/progress', { schema: JOB_PROGRESS_DOC }, async (request, reply) => {
    const row = await visibleJob(app, request, (request.params as { jobId: string }).jobId);
    const { jobs } = app.kiln;
    // HEAD answers the headers alone and ends: it holds nothing.
    if (request.method !== 'HEAD') app.kiln.streams.hold(request, reply);
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      // Proxies such as nginx must not buffer the stream.
      'x-accel-buffering': 'no',
    });
    // HEAD (fastify answers it with this handler): the headers alone, at once. Without this the answer
    // waited for the job's end, with not even its headers sent while it ran.
    if (request.method === 'HEAD') return void res.end();
    // Ids are unique and increasing on a stream and across its reconnects: an event carries the id it was
    // published with, raised past the last one this client saw (Last-Event-ID on a reconnect) so a
    // snapshot of the state or an event from before the reconnect never repeats or goes back.
    let lastSent = lastEventId(request.headers['last-event-id']);
    let sentLive = false;
    const send = (sourceId: number, e: JobEvent) => {
      const id = Math.max(sourceId, lastSent + 1);
      lastSent = id;
      const { type, ...payload } = e;
      const body =
        type === 'progress'
          ? payload
          : type === 'completed'
            ? (payload as { result: unknown }).result
            : (payload as { error: unknown }).error;
      res.write(`id: ${id}\nevent: ${type}\ndata: ${JSON.stringify(body)}\n\n`);
    };
    // A client that stops reading (a stalled tab, a hostile one holding many streams) must not have every
    // event queued for it in memory: while the socket is behind, progress events are superseded by the
    // newest one (sent on drain) and heartbeats skipped; the final event always goes out.
    let pending: { id: number; event: JobEvent } | undefined;
    const sendLatest = (id: number, event: JobEvent) => {
      if (res.writableNeedDrain) pending = { id, event };
      else send(id, event);
    };
    res.on('drain', () => {
      const p = pending;
      pending = undefined;
      if (p && !closed) send(p.id, p.event);
    });
    let closed = false;
    let unsubscribe = () => {};
    let heartbeat: NodeJS.Timeout | undefined;
    const end = () => {
      if (closed) return;
      closed = true;
      unsubscribe();
      clearInterval(heartbeat);
      res.end();
    };
    request.raw.on('close', end);
    res.write('retry: 3000\n\n');
    if (isFinal(row.status)) {
      send(jobs.events.nextId(row.id), finalEvent(row));
      return end();
    }
    unsubscribe = jobs.events.subscribe(row.id, ({ id, event }) => {
      sentLive = true;
      if (event.type === 'progress') return sendLatest(id, event);
      pending = undefined;
      send(id, event);
      end();
    });
    heartbeat = setInterval(() => {
      if (!res.writableNeedDrain) res.write(': heartbeat\n\n');
      // Scaled mode: an event lost on the way (a Redis hiccup) must not leave the stream open forever.
      if (jobs.distributed)
        void getJob(app.kiln.store.db, row.id).then(
          (r) => {
            if (!closed && r && isFinal(r.status)) {
              send(jobs.events.nextId(row.id), finalEvent(r));
              end();
            }
          },
          () => {},
        );
    }, app.kiln.config.sseHeartbeatMs);
    // The job may have ended between the first read and the subscription.
    const now = await getJob(app.kiln.store.db, row.id);
    if (!closed && now && isFinal(now.status)) {
      send(jobs.events.nextId(row.id), finalEvent(now));
      end();
    } else if (!closed && now && !sentLive) {
      // The state so far, unless a live event (newer than this read) already went out.
      send(jobs.events.lastId(row.id), { type: 'progress', percent: now.progress, stage: now.stage ?? undefined });
    }
  });
}

/** The Last-Event-ID a reconnecting EventSource sends: the id to continue after (0 when absent or not a number). */
function lastEventId(header: string | string[] | undefined): number {
  const n = Number([header ?? ''].flat()[0]);
  return Number.isSafeInteger(n) && n > 0 ? n : 0;
}

export const jobId = { name: 'jobId', in: 'path', required: true, schema: { type: 'string' } };

const LIST_JOBS_DOC: RouteDoc = {
  operationId: 'listJobs',
  tags: ['jobs'],
  summary: 'Your jobs, newest first (admins: all jobs).',
  parameters: [
    { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 500, default: 50 } },
    { name: 'offset', in: 'query', schema: { type: 'integer', minimum: 0, default: 0 } },
    { name: 'status', in: 'query', schema: { type: 'string', enum: [...JOB_STATUSES] } },
    { name: 'clientJobId', in: 'query', schema: { type: 'string' }, description: 'Only the jobs started with this clientJobId.' },
  ],
  response: {
    '200': json({
      type: 'object',
      required: ['jobs', 'limit', 'offset'],
      properties: { jobs: { type: 'array', items: ref('Job') }, limit: { type: 'integer' }, offset: { type: 'integer' } },
    }),
    ...errorResponses([400, 401]),
  },
};

const GET_JOB_DOC: RouteDoc = {
  operationId: 'getJob',
  tags: ['jobs'],
  summary: 'The state of a job.',
  parameters: [jobId],
  response: { '200': json(ref('Job')), ...errorResponses([401, 404]) },
};

const CANCEL_JOB_DOC: RouteDoc = {
  operationId: 'cancelJob',
  tags: ['jobs'],
  summary: 'Cancel a queued or running job.',
  parameters: [jobId],
  response: { '200': json(ref('Job')), ...errorResponses([401, 404, 409]) },
};

const JOB_PROGRESS_DOC: RouteDoc = {
  operationId: 'jobProgress',
  tags: ['jobs'],
  summary: 'Progress as server-sent events.',
  description:
    'Events carry unique, increasing ids; a client reconnecting with `Last-Event-ID` gets the current state and the events after it, with ids above the one it sent. `progress` {percent, stage}; the stream ends with `completed` (the run result) or `failed` (an error body). A comment line is sent every 15 s. A client connecting after the end gets the final event at once. A caller may hold MAX_STREAMS_PER_USER streams open at once (64 by default); the next is answered 429 with Retry-After.',
  parameters: [jobId],
  response: {
    '200': { description: 'An event stream.', content: { 'text/event-stream': { schema: { type: 'string' } } } },
    ...errorResponses([401, 404, 429]),
  },
};
