/**
 * Draining before a stop (SIGTERM from systemd, a container runtime or a deploy): the instance refuses
 * new work with 503 + Retry-After (a load balancer sends it elsewhere; readyz says not ready), takes no
 * more jobs from the shared queue (scaled mode), lets the jobs it runs finish for the grace period, and
 * only then closes. What still runs then is handed back to the shared queue in scaled mode (another
 * instance runs it from the start) and cancelled with the reason daemon-shutdown otherwise; waiting
 * clients get 503, never 500.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { KilnError } from '../src/core/errors.js';

const READ_ONLY = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Answers being sent, per app: close() cuts every connection, so a drain lets these end first. */
const answering = new WeakMap<FastifyInstance, Set<ServerResponse>>();

/** The hook that turns new work away while draining (installed by buildServer before the routes). */
export function installDrainGuard(app: FastifyInstance): void {
  const open = new Set<ServerResponse>();
  answering.set(app, open);
  app.addHook('onRequest', async (request, reply) => {
    open.add(reply.raw);
    reply.raw.once('close', () => open.delete(reply.raw));
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

/**
 * Waits (until `deadline`, epoch ms) for the answers still being sent once the jobs are done: a
 * synchronous waiter's output or a download would otherwise be cut mid-body by close(). Event streams
 * are not waited for: they end with their job, or at close.
 */
export async function answersSent(app: FastifyInstance, deadline: number): Promise<void> {
  const open = answering.get(app);
  const pending = () => [...(open ?? [])].some((r) => !String(r.getHeader('content-type') ?? '').startsWith('text/event-stream'));
  while (pending() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
}
