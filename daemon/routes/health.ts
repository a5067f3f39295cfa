/** Liveness, readiness and the admin diagnostics. */
import { statfs } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import { VERSION } from '../../src/core/version.js';
import { requirePermission } from '../auth/permissions.js';
import { detectGpu } from '../system/gpu.js';

/** Below this much free space new uploads would likely fail half-way. */
const MIN_FREE_BYTES = 256 * 1024 * 1024;

async function check(fn: () => Promise<unknown>): Promise<{ ok: boolean; error?: string }> {
  try {
    await fn();
    return { ok: true };
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
}

export async function healthRoutes(app: FastifyInstance): Promise<void> {
  const { store, jobs, config } = app.kiln;

  app.get('/api/v1/health', { config: { public: true } }, async (_request, reply) => {
    const db = await check(() => store.ping());
    // The driver's message can name the database host: it is for admin/health, not for anyone.
    if (!db.ok)
      return reply.code(503).send({ status: 'unhealthy', version: VERSION, database: { ok: false, error: 'database unavailable' } });
    return { status: 'healthy', version: VERSION };
  });

  const disk = async () => {
    const s = await statfs(config.sharedDir);
    const free = s.bavail * s.bsize;
    return {
      ok: free >= MIN_FREE_BYTES,
      freeBytes: free,
      totalBytes: s.blocks * s.bsize,
      ...(free < MIN_FREE_BYTES ? { error: 'low disk space' } : {}),
    };
  };

  // Public, so it answers only ok/not ok per check: free and total bytes (and error texts that could
  // name paths or hosts) are shown on /api/v1/admin/health alone.
  app.get('/api/v1/readyz', { config: { public: true } }, async (_request, reply) => {
    const [db, q, d] = await Promise.all([
      check(() => store.ping()),
      check(() => jobs.queue.ping()),
      disk().catch((e: Error) => ({ ok: false, error: e.message })),
    ]);
    const brief = (c: { ok: boolean }, what: string) => (c.ok ? { ok: true } : { ok: false, error: `${what} unavailable` });
    const database = brief(db, 'database');
    const queue = brief(q, 'queue');
    const storage = d.ok ? { ok: true } : { ok: false, error: 'low disk space or data directory unavailable' };
    // A draining instance (SIGTERM received) must get no new traffic from the load balancer.
    const ready = !app.kiln.draining && database.ok && queue.ok && storage.ok;
    return reply.code(ready ? 200 : 503).send({
      status: ready ? 'ready' : 'not-ready',
      ...(app.kiln.draining ? { draining: true } : {}),
      checks: { database, queue, disk: storage },
    });
  });

  app.get('/api/v1/admin/health', async (request) => {
    requirePermission(request, 'system:health');
    const database = await check(() => store.ping());
    const storage = await disk().catch((e: Error) => ({ ok: false, error: e.message }));
    return {
      status: database.ok ? 'healthy' : 'unhealthy',
      version: VERSION,
      uptimeSeconds: Math.round((Date.now() - app.kiln.startedAt) / 1000),
      storage: { mode: 'local', dataDir: config.dataDir, sharedDir: config.sharedDir, ...storage },
      database: { kind: store.kind, ...database },
      queue: { ...jobs.queue.state(), shared: await jobs.queue.sharedCounts?.() },
      gpu: await detectGpu(),
      authEnabled: config.authEnabled,
      node: process.version,
      memory: { rssBytes: process.memoryUsage().rss },
    };
  });
}
