/**
 * Draining before a stop (SIGTERM from systemd, a container runtime or a deploy): the instance refuses
 * new work with 503 + Retry-After (a load balancer sends it elsewhere; readyz says not ready), takes no
 * more jobs from the shared queue (scaled mode), lets the jobs it runs finish for the grace period, and
 * only then closes. What still runs then is handed back to the shared queue in scaled mode (another
 * instance runs it from the start) and cancelled with the reason daemon-shutdown otherwise; waiting
 * clients get 503, never 500.
 */
import type { FastifyInstance } from 'fastify';
import { KilnError } from '../src/core/errors.js';

const READ_ONLY = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The hook that turns new work away while draining (installed by buildServer before the routes). */
export function installDrainGuard(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    if (!app.kiln.draining || READ_ONLY.has(request.method)) return;
    reply.header('retry-after', '30');
    throw new KilnError('UNAVAILABLE', 'This kiln instance is shutting down and takes no new work; try again in a moment.', {
      reason: 'draining',
    });
  });
}

/** Stops taking work, waits up to `graceMs` for running jobs; true when they all finished. */
export async function drain(app: FastifyInstance, graceMs: number): Promise<boolean> {
  app.kiln.draining = true;
  // The other instances take what waits in the shared queue meanwhile.
  await app.kiln.jobs.queue.stopIntake?.().catch(() => {});
  return app.kiln.jobs.idle(graceMs);
}
