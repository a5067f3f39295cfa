/** Liveness, readiness and the admin diagnostics. */
import { statfs } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import { VERSION } from '../../src/core/version.js';
import { requirePermission } from '../auth/permissions.js';
import { detectGpu } from '../system/gpu.js';
import { errorResponses, json, pub } from '../openapi/common.js';
import type { RouteDoc } from '../openapi/route-doc.js';

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

  app.get('/api/v1/health', { config: { public: true }, schema: HEALTH_DOC }, async (_request, reply) => {
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
  app.get('/api/v1/readyz', { config: { public: true }, schema: READYZ_DOC }, async (_request, reply) => {
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

  app.get('/api/v1/admin/health', { schema: ADMIN_HEALTH_DOC }, async (request) => {
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

/** One check of /readyz and /admin/health: {ok, error?} (admin/health adds what the check measured). */
const checkSchema = { type: 'object', required: ['ok'], properties: { ok: { type: 'boolean' }, error: { type: 'string' } } };
const readiness = {
  type: 'object',
  required: ['status', 'checks'],
  properties: {
    status: { type: 'string', enum: ['ready', 'not-ready'] },
    draining: { const: true, description: 'Present while the instance shuts down (SIGTERM): it takes no new work.' },
    checks: {
      type: 'object',
      required: ['database', 'queue', 'disk'],
      properties: {
        database: checkSchema,
        queue: checkSchema,
        // Public: ok/not ok only; the figures are on /api/v1/admin/health.
        disk: checkSchema,
      },
    },
  },
};
const adminHealth = {
  type: 'object',
  required: ['status', 'version', 'uptimeSeconds', 'storage', 'database', 'queue', 'authEnabled', 'node'],
  properties: {
    status: { type: 'string', enum: ['healthy', 'unhealthy'] },
    version: { type: 'string' },
    uptimeSeconds: { type: 'integer' },
    storage: {
      type: 'object',
      properties: {
        mode: { const: 'local' },
        dataDir: { type: 'string' },
        sharedDir: { type: 'string' },
        ok: { type: 'boolean' },
        freeBytes: { type: 'integer' },
        totalBytes: { type: 'integer' },
        error: { type: 'string' },
      },
    },
    database: {
      type: 'object',
      properties: { kind: { type: 'string', enum: ['sqlite', 'postgres'] }, ok: { type: 'boolean' }, error: { type: 'string' } },
    },
    queue: { type: 'object', description: 'Local queue state (running, waiting, concurrency) and, with Redis, the shared counts.' },
    gpu: { description: 'Detected GPU acceleration, if any.' },
    authEnabled: { type: 'boolean' },
    node: { type: 'string' },
    memory: { type: 'object', properties: { rssBytes: { type: 'integer' } } },
  },
};

const HEALTH_DOC: RouteDoc = {
  ...pub,
  operationId: 'health',
  tags: ['health'],
  summary: 'Liveness: the database answers.',
  response: {
    '200': json({
      type: 'object',
      required: ['status', 'version'],
      properties: { status: { const: 'healthy' }, version: { type: 'string' } },
    }),
    '503': json(
      {
        type: 'object',
        required: ['status', 'version', 'database'],
        properties: { status: { const: 'unhealthy' }, version: { type: 'string' }, database: checkSchema },
      },
      'The database is unreachable.',
    ),
  },
};

const READYZ_DOC: RouteDoc = {
  ...pub,
  operationId: 'readyz',
  tags: ['health'],
  summary: 'Readiness: database, queue and disk space.',
  response: { '200': json(readiness, 'Ready.'), '503': json(readiness, 'Not ready: the failing check says why.') },
};

const ADMIN_HEALTH_DOC: RouteDoc = {
  operationId: 'adminHealth',
  tags: ['health'],
  summary: 'Diagnostics (permission system:health).',
  response: { '200': json(adminHealth), ...errorResponses([401, 403]) },
};
