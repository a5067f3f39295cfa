/** Liveness, readiness and the admin diagnostics. */
import type { FastifyInstance } from 'fastify';
import { VERSION } from '../../src/core/version.js';
import { workspaceRoot } from '../../src/core/workspace.js';
import { requirePermission } from '../auth/permissions.js';
import { type DirHealth, dirHealth } from '../system/dir-health.js';
import { detectGpu } from '../system/gpu.js';
import { errorResponses, json, pub } from '../openapi/common.js';
import type { RouteDoc } from '../openapi/route-doc.js';

async function check(fn: () => Promise<unknown>): Promise<{ ok: boolean; error?: string }> {
  try {
    await fn();
    return { ok: true };
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
}

/** A bucket that does not answer within this long counts as unavailable (readiness must answer fast). */
const OBJECT_STORAGE_TIMEOUT_MS = 3000;

function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

export async function healthRoutes(app: FastifyInstance): Promise<void> {
  const { store, jobs, config, storage: objects } = app.kiln;
  // Checked only when configured: local storage is the disk check.
  const objectStorage = objects.kind === 's3' ? () => check(() => within(objects.ping(), OBJECT_STORAGE_TIMEOUT_MS)) : undefined;

  app.get('/api/v1/health', { config: { public: true }, schema: HEALTH_DOC }, async (_request, reply) => {
    const db = await check(() => store.ping());
    // The driver's message can name the database host: it is for admin/health, not for anyone.
    if (!db.ok)
      return reply.code(503).send({ status: 'unhealthy', version: VERSION, database: { ok: false, error: 'database unavailable' } });
    return { status: 'healthy', version: VERSION };
  });

  // Every directory the daemon writes to: the database's, the jobs' and library's, the runs' workspaces.
  const minFree = config.minFreeDiskMb * 1024 * 1024;
  const disk = async () => {
    const [data, shared, tmp] = await Promise.all([
      dirHealth(config.dataDir, minFree),
      config.sharedDir === config.dataDir ? undefined : dirHealth(config.sharedDir, minFree),
      dirHealth(workspaceRoot(), minFree, { create: true }),
    ]);
    const dirs: Record<string, DirHealth> = { data, ...(shared ? { shared } : {}), tmp };
    const bad = Object.entries(dirs).find(([, d]) => !d.ok);
    const main = shared ?? data;
    return {
      ok: !bad,
      freeBytes: main.freeBytes,
      totalBytes: main.totalBytes,
      ...(bad ? { error: `${bad[0]} directory: ${bad[1].error}` } : {}),
      dirs,
    };
  };

  // Public, so it answers only ok/not ok per check: free and total bytes (and error texts that could
  // name paths or hosts) are shown on /api/v1/admin/health alone.
  app.get('/api/v1/readyz', { config: { public: true }, schema: READYZ_DOC }, async (_request, reply) => {
    const [db, q, d, o] = await Promise.all([check(() => store.ping()), check(() => jobs.queue.ping()), disk(), objectStorage?.()]);
    const brief = (c: { ok: boolean }, what: string) => (c.ok ? { ok: true } : { ok: false, error: `${what} unavailable` });
    const database = brief(db, 'database');
    const queue = brief(q, 'queue');
    const storage = d.ok ? { ok: true } : { ok: false, error: 'low disk space, or a data or temp directory not writable' };
    const bucket = o && brief(o, 'object storage');
    // A draining instance (SIGTERM received) must get no new traffic from the load balancer.
    const ready = !app.kiln.draining && database.ok && queue.ok && storage.ok && (bucket?.ok ?? true);
    return reply.code(ready ? 200 : 503).send({
      status: ready ? 'ready' : 'not-ready',
      ...(app.kiln.draining ? { draining: true } : {}),
      checks: { database, queue, disk: storage, ...(bucket ? { objectStorage: bucket } : {}) },
    });
  });

  app.get('/api/v1/admin/health', { schema: ADMIN_HEALTH_DOC }, async (request) => {
    requirePermission(request, 'system:health');
    const database = await check(() => store.ping());
    const [storage, bucket] = await Promise.all([disk(), objectStorage?.()]);
    return {
      status: database.ok && storage.ok && (bucket?.ok ?? true) ? 'healthy' : 'unhealthy',
      version: VERSION,
      uptimeSeconds: Math.round((Date.now() - app.kiln.startedAt) / 1000),
      storage: {
        mode: objects.kind,
        dataDir: config.dataDir,
        sharedDir: config.sharedDir,
        ...storage,
        ...(bucket ? { objectStorage: { ...objects.describe(), ...bucket } } : {}),
      },
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
        objectStorage: { ...checkSchema, description: 'Present when object storage (S3_BUCKET) is configured: the bucket answers.' },
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
        mode: { type: 'string', enum: ['local', 's3'], description: 'Where blobs live: files under sharedDir, or an S3 bucket.' },
        dataDir: { type: 'string' },
        sharedDir: { type: 'string' },
        ok: { type: 'boolean', description: 'Every directory in dirs is writable and has at least 256 MB free.' },
        freeBytes: { type: 'integer', description: 'Free space of the shared directory (the data dir without SHARED_DIR).' },
        totalBytes: { type: 'integer' },
        error: { type: 'string', description: 'The first directory that fails, and why.' },
        dirs: {
          type: 'object',
          description:
            'Each directory kiln writes to: data (database), shared (with SHARED_DIR: jobs, library), tmp (run workspaces, KILN_TMP_DIR).',
          additionalProperties: {
            type: 'object',
            required: ['path', 'ok', 'writable'],
            properties: {
              path: { type: 'string' },
              ok: { type: 'boolean' },
              writable: { type: 'boolean' },
              freeBytes: { type: 'integer' },
              totalBytes: { type: 'integer' },
              error: { type: 'string' },
            },
          },
        },
        objectStorage: {
          type: 'object',
          description: 'With S3_BUCKET: the bucket, endpoint and region, and whether it answers.',
          properties: {
            kind: { const: 's3' },
            endpoint: { type: ['string', 'null'] },
            bucket: { type: 'string' },
            region: { type: 'string' },
            prefix: { type: ['string', 'null'] },
            downloads: { type: 'string', enum: ['proxy', 'redirect'] },
            ok: { type: 'boolean' },
            error: { type: 'string' },
          },
        },
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
  summary: 'Readiness: database, queue, disk space and, when configured, object storage.',
  response: { '200': json(readiness, 'Ready.'), '503': json(readiness, 'Not ready: the failing check says why.') },
};

const ADMIN_HEALTH_DOC: RouteDoc = {
  operationId: 'adminHealth',
  tags: ['health'],
  summary: 'Diagnostics (permission system:health).',
  response: { '200': json(adminHealth), ...errorResponses([401, 403]) },
};
