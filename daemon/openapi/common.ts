/** OpenAPI pieces shared by the documents of several route families (tools, pipelines). */

/** RFC 7240 preferences every run route honours. */
export const PREFER = {
  name: 'Prefer',
  in: 'header',
  required: false,
  schema: { type: 'string', examples: ['respond-async', 'wait=30'] },
  description:
    "`respond-async`: answer 202 at once; `wait=N`: wait at most N seconds for the result before answering 202 (instead of the server's SYNC_WAIT_MS). The honoured preference comes back in Preference-Applied.",
};

export const ACCEPTED = {
  description: 'Queued or still running: follow the job at statusUrl (Location) or its events at eventsUrl.',
  headers: {
    Location: { schema: { type: 'string' }, description: 'The job: /api/v1/jobs/{jobId}.' },
    'Preference-Applied': { schema: { type: 'string' }, description: 'The Prefer preference honoured, if any.' },
  },
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Accepted' } } },
};

/** GET /metrics (daemon/routes/metrics.ts). */
export function metricsPaths(): Record<string, unknown> {
  return {
    '/metrics': {
      get: {
        operationId: 'metrics',
        tags: ['health'],
        summary:
          'Prometheus metrics: requests, jobs, queue, engine pools, process (admin with system:health, or METRICS_TOKEN as the bearer).',
        security: [{ bearer: [] }],
        responses: {
          '200': { description: 'Prometheus text exposition format 0.0.4.', content: { 'text/plain': { schema: { type: 'string' } } } },
          '401': { $ref: '#/components/responses/Error401' },
          '403': { $ref: '#/components/responses/Error403' },
        },
      },
    },
  };
}
