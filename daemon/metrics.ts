/**
 * The daemon's Prometheus registry (prom-client): requests by route and status with durations, jobs by
 * tool and outcome with durations, queue depth, warm engine pools, and the process's own figures. One
 * registry per app, so several daemons in one process (the tests) do not share counters. Installed by
 * buildServer before the routes, so its hook sees every route; GET /metrics serves it.
 */
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import type { FinishedJob } from './jobs/service.js';

export async function installMetrics(app: FastifyInstance): Promise<Registry> {
  const { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } = await import('prom-client');
  const registry = new Registry();
  // The event-loop delay histogram samples with a timer: prom-client's 10 ms woke the idle daemon 99
  // times a second (1.35 % CPU idle); at 100 ms it wakes 11 times (0.8 %), and a block of the loop
  // long enough to matter still shows in the percentiles.
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 100 });
  const requests = new Counter({
    name: 'kiln_http_requests_total',
    help: 'HTTP requests by method, route and status.',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  });
  const requestSeconds = new Histogram({
    name: 'kiln_http_request_duration_seconds',
    help: 'HTTP request duration until the answer was sent.',
    labelNames: ['method', 'route'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const jobs = new Counter({
    name: 'kiln_jobs_total',
    help: 'Jobs ended on this instance, by tool (or preset), kind and outcome.',
    labelNames: ['tool', 'kind', 'status'],
    registers: [registry],
  });
  const jobSeconds = new Histogram({
    name: 'kiln_job_duration_seconds',
    help: 'How long jobs ran, by tool.',
    labelNames: ['tool', 'status'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600],
    registers: [registry],
  });
  const { queue } = app.kiln.jobs;
  new Gauge({
    name: 'kiln_queue_jobs',
    help: 'Jobs on this instance by state (running, queued).',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const s = queue.state();
      this.set({ state: 'running' }, s.running);
      this.set({ state: 'queued' }, s.queued);
    },
  });
  new Gauge({
    name: 'kiln_engine_pool_processes',
    help: 'Warm engine processes alive (LibreOffice pool).',
    labelNames: ['engine'],
    registers: [registry],
    async collect() {
      const { officePoolStatus } = await import('../src/engines/office.js');
      this.set({ engine: 'libreoffice' }, officePoolStatus().pids.filter(Boolean).length);
    },
  });

  new Gauge({
    name: 'kiln_http_connections',
    help: 'Client connections open now (MAX_CONNECTIONS, MAX_CONNECTIONS_PER_ADDRESS).',
    registers: [registry],
    collect() {
      this.set(app.kiln.connections().open);
    },
  });
  new Counter({
    name: 'kiln_http_connections_refused_total',
    help: 'Connections refused at the cap: the server had MAX_CONNECTIONS open, or the address MAX_CONNECTIONS_PER_ADDRESS.',
    labelNames: ['cap'],
    registers: [registry],
    collect() {
      const { refused } = app.kiln.connections();
      this.reset();
      this.inc({ cap: 'server' }, refused.server);
      this.inc({ cap: 'address' }, refused.address);
    },
  });

  new Gauge({
    name: 'kiln_http_streams',
    help: 'Event streams (job progress, MCP) open now (MAX_STREAMS_PER_USER).',
    registers: [registry],
    collect() {
      this.set(app.kiln.streams.stats().open);
    },
  });
  new Counter({
    name: 'kiln_http_streams_refused_total',
    help: 'Event streams refused because their user (or anonymous address) had MAX_STREAMS_PER_USER open.',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(app.kiln.streams.stats().refused);
    },
  });

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    requests.inc({ method: request.method, route, status: String(reply.statusCode) });
    requestSeconds.observe({ method: request.method, route }, reply.elapsedTime / 1000);
  });
  app.kiln.jobs.finished.on('job', (j: FinishedJob) => {
    jobs.inc({ tool: j.tool, kind: j.kind, status: j.status });
    if (j.ms !== undefined) jobSeconds.observe({ tool: j.tool, status: j.status }, j.ms / 1000);
  });

  return registry;
}
