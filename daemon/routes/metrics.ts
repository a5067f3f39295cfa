/** GET /metrics for an admin (system:health) or a scraper holding METRICS_TOKEN (daemon/metrics.ts fills the registry). */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { KilnError } from '../../src/core/errors.js';
import { roleHas } from '../auth/permissions.js';
import { errorResponses, text } from '../openapi/common.js';
import type { RouteDoc } from '../openapi/route-doc.js';

export async function metricsRoutes(app: FastifyInstance): Promise<void> {
  const { registry } = app.kiln;
  const token = app.kiln.config.metricsToken;
  app.get('/metrics', { config: { public: true }, schema: METRICS_DOC }, async (request, reply) => {
    const bearer = /^Bearer\s+(.+)$/i.exec(request.headers.authorization ?? '')?.[1];
    // Bytes, not characters: a Latin-1 header character is two UTF-8 bytes, and timingSafeEqual throws
    // (a 500) on buffers of different lengths.
    const given = Buffer.from(bearer ?? '');
    const byToken = !!token && !!bearer && given.length === Buffer.byteLength(token) && timingSafeEqual(given, Buffer.from(token));
    if (!byToken) {
      const user = await app.kiln.auth.identify(request, reply);
      if (!user) throw new KilnError('UNAUTHORIZED', 'Metrics need an admin key or session, or METRICS_TOKEN as the bearer.');
      if (!roleHas(user.role, 'system:health')) throw new KilnError('FORBIDDEN', 'Metrics are for admins (system:health).');
    }
    return reply.header('content-type', registry.contentType).send(spellNaN(await registry.metrics()));
  });
}

const METRICS_DOC: RouteDoc = {
  operationId: 'metrics',
  tags: ['health'],
  summary: 'Prometheus metrics: requests, jobs, queue, engine pools, process (admin with system:health, or METRICS_TOKEN as the bearer).',
  security: [{ bearer: [] }],
  response: {
    '200': text('text/plain', 'Prometheus text exposition format 0.0.4.'),
    ...errorResponses([401, 403]),
  },
};

/**
 * prom-client writes a value that is not a number as `Nan` (the event-loop lag before its first
 * sample, under load): Prometheus reads that, but the exposition format spells it `NaN` and stricter
 * parsers refuse anything else.
 */
function spellNaN(text: string): string {
  return text.replace(/ Nan$/gm, ' NaN');
}
