/**
 * buildServer(config): the whole daemon as a fastify app, not yet listening. `kiln serve` and the
 * HTTP tests both call it.
 */
import { chmod } from 'node:fs/promises';
import path from 'node:path';
import multipart from '@fastify/multipart';
import Fastify, { type FastifyInstance, type FastifyPluginAsync } from 'fastify';
import { InstallQueue } from '../src/ai/install/queue.js';
import { shareCores } from '../src/ai/threads.js';
import { KilnError } from '../src/core/errors.js';
import { makeDir } from '../src/core/make-dir.js';
import { onEngineStopped } from '../src/engines/idle-stop.js';
import { audit } from './accounts/audit.js';
import { Authenticator } from './auth/authenticate.js';
import { checkDataKey, encryptClearMfaSecrets, loadDataKey } from './auth/data-key.js';
import { ensureAdmin } from './auth/bootstrap.js';
import type { DaemonConfig } from './config.js';
import type { DaemonContext } from './context.js';
import { installBodyTypes } from './http/body-types.js';
import { installExpectContinue } from './http/expect-continue.js';
import { installCompression } from './http/compress.js';
import { clientErrorHandler, frameworkErrors, installErrorHandling } from './http/errors.js';
import { installHostGuard } from './http/host-guard.js';
import { installQuotaRelease } from './http/quota.js';
import { installSingleQueryValues } from './http/query.js';
import { loadTls, type TlsMaterial } from './http/tls.js';
import { loggerOptions } from './http/logging.js';
import { LiveLimits } from './http/limits.js';
import { RateLimiter } from './http/rate-limit.js';
import { installSlowBodyGuards } from './http/timeouts.js';
import { installConnectionCaps } from './http/connection-caps.js';
import { StreamCaps } from './http/stream-caps.js';
import { installDrainGuard } from './drain.js';
import { installMetrics } from './metrics.js';
import { JobService } from './jobs/service.js';
import { instanceIdFor } from './jobs/upkeep.js';
import { createQueue } from './queue/create.js';
import { isDistributed } from './queue/queue.js';
import { MemoryInputs } from './http/memory-inputs.js';
import * as routeModules from './routes/list.js';
import { trackRoutes } from './openapi/route-doc.js';
import { createStorage } from './storage/create.js';
import { objectArchiveStore } from './features/archive-store.js';
import { openStore } from './store/db.js';
import { deleteExpiredSessions } from './store/sessions.js';
import { localLeases, redisLeases } from './watch/lock.js';
import { WatchFolders } from './watch/service.js';
import { QuietTrim, trimNativeHeap } from './system/heap-trim.js';
import { fullGc } from './system/gc.js';

declare module './context.js' {
  interface DaemonContext {
    /** HTTPS in use (daemon/http/tls.ts); `kiln serve` prints its fingerprint. */
    tls?: TlsMaterial;
  }
}

/** Documentation routes are readable without credentials (they hold no user data). */
const PUBLIC_PREFIXES = ['/api/docs'];

export { registeredRoutes, type RegisteredRoute } from './openapi/route-doc.js';

/**
 * The data dir holds the database, the data key, uploads and results: only the daemon's user may read
 * it. The umask makes every file the daemon (and the engines it spawns) creates 0600 and every
 * directory 0700; the directories themselves are tightened at each start, which also closes off files
 * older versions wrote 0644.
 */
async function privateDirs(config: DaemonConfig): Promise<void> {
  process.umask(0o077);
  for (const dir of new Set([config.dataDir, config.sharedDir])) {
    // makeDir, not mkdir -p: under /proc node's recursive mkdir spins for ever instead of failing.
    await makeDir(dir, 0o700)
      .then(() => chmod(dir, 0o700))
      .catch((e: Error) => {
        // The admin's to fix (a typo, a path under a file, a read-only or foreign volume): it used to
        // surface as a bare ENOTDIR/EACCES with the exit code of an internal error.
        const flag = dir === config.dataDir ? '--data-dir (DATA_DIR)' : 'SHARED_DIR';
        throw new KilnError('USAGE_ERROR', `The data dir ${dir} cannot be used: ${e.message}. Choose another ${flag}.`, { cause: e });
      });
  }
  for (const f of ['kiln.db', 'kiln.db-wal', 'kiln.db-shm']) await chmod(path.join(config.dataDir, f), 0o600).catch(() => {});
}

export async function buildServer(config: DaemonConfig): Promise<FastifyInstance> {
  await privateDirs(config);
  const requestMs = config.requestTimeoutS * 1000;
  // Node checks the header and request time-outs on connectionsCheckingInterval (30 s by default).
  const headersMs = Math.min(config.headersTimeoutS * 1000, requestMs);
  const tls = await loadTls(config);
  const serverOptions = { headersTimeout: headersMs, connectionsCheckingInterval: Math.max(250, Math.min(5000, headersMs / 2)) };
  const app = Fastify({
    ...loggerOptions(config.logger),
    // https.createServer takes the http server options too.
    ...(tls ? { https: { key: tls.key, cert: tls.cert, ...serverOptions } } : { http: serverOptions }),
    bodyLimit: 10 * 1024 * 1024,
    // Bounds receiving a request (long uploads need it generous); responses such as SSE streams are not limited.
    requestTimeout: requestMs,
    // A hop count is accepted at run time (fastify's types list only the other forms).
    trustProxy: config.trustProxy as boolean | string,
    forceCloseConnections: true,
    // Download URLs carry the output's file name (up to 255 bytes, percent-encoded up to three times
    // longer): fastify's default of 100 answered 414 for outputs of long or non-Latin file names.
    routerOptions: { maxParamLength: 1024 },
    // What the router and node's HTTP parser refuse before any route, in the one error shape too.
    frameworkErrors,
    clientErrorHandler,
  });
  // Before any plugin, so routes of every plugin are seen (the OpenAPI document reads their schemas).
  trackRoutes(app);
  installSlowBodyGuards(app, {
    idleMs: config.bodyIdleTimeoutS * 1000,
    minRateBps: config.minBodyRateBps,
    windowMs: config.bodyRateWindowS * 1000,
  });
  installExpectContinue(app, config.maxRequestMb);
  const connections = installConnectionCaps(app.server, {
    max: config.maxConnections,
    perAddress: config.maxConnectionsPerAddress,
    trustProxy: config.trustProxy,
    tls: !!tls,
  });
  const store = await openStore({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  try {
    const dataKey = await loadDataKey(config.secretKey, config.sharedDir);
    await checkDataKey(store.db, dataKey);
    await encryptClearMfaSecrets(store.db, dataKey);
    const bootstrap = await ensureAdmin(store, config);
    const storage = await createStorage(config);
    const instanceId = await instanceIdFor(config.dataDir, !!config.redisUrl);
    const queue = await createQueue(config, instanceId);
    // Models run beside the other jobs the queue runs at once: their idle threads sleep (src/ai/threads.ts).
    shareCores(config.jobConcurrency);
    const jobs = new JobService(store, queue, config, instanceId, app.log, storage);
    await jobs.recover().catch(async (e) => {
      await queue.close();
      throw e;
    });
    await deleteExpiredSessions(store.db);
    const leases = config.redisUrl ? await redisLeases(config.redisUrl, config.redisPrefix, instanceId) : localLeases();
    const watchFolders = new WatchFolders(store, jobs, leases, app.log, dataKey);
    const features = new InstallQueue(
      config.dataDir,
      (e) => {
        const event = e.type === 'installed' ? 'feature.installed' : 'feature.failed';
        audit(store.db, { event, target: e.bundle, details: { by: e.by, via: e.via, error: e.error } }).catch((err) =>
          app.log.error({ err }, 'audit of a feature install failed'),
        );
      },
      // With S3, bundles installed on one instance are kept in the bucket and installed from there by
      // the others (docs/SCALING.md); on a local disk each data dir has its own, as before.
      storage.kind === 's3'
        ? {
            archives: objectArchiveStore(storage),
            syncEveryMs: config.bundleSyncS * 1000,
            warn: (msg, err) => app.log.warn({ err }, msg),
          }
        : {},
    );
    const ctx: DaemonContext = {
      config,
      store,
      auth: new Authenticator(store, config),
      jobs,
      startedAt: Date.now(),
      bootstrap,
      watchFolders,
      features,
      registry: undefined as never,
      draining: false,
      dataKey,
      storage,
      tls,
      limits: new LiveLimits(store.db, config),
      connections,
      streams: new StreamCaps(config.maxStreamsPerUser),
      memoryInputs: isDistributed(queue) || !config.memoryInputsMb ? undefined : new MemoryInputs(config.memoryInputsMb * 1048576),
    };
    app.decorate('kiln', ctx);
    // Runs with fileId save through the file library hook, on whichever instance runs them.
    jobs.setLibrarySaver((viewer, fileId, row) => {
      if (!ctx.fileLibrary) throw new KilnError('VALIDATION_ERROR', 'fileId: the file library is not available on this server.');
      return ctx.fileLibrary.saveOutput(viewer, fileId, row);
    });
    // Once jobs pause (system/heap-trim.ts): the database's log is checkpointed (store/db.ts says why), the
    // free upload arenas go, a full collection frees what V8 held (dropped arenas, buffers of the jobs),
    // then the C heap's free pages go back to the system.
    const heapTrim = new QuietTrim(
      config.heapTrimMs,
      () => jobs.busy(),
      async () => {
        store.checkpoint();
        ctx.memoryInputs?.dropFree();
        await fullGc();
        trimNativeHeap();
      },
    );
    jobs.finished.on('job', () => heapTrim.poke());
    // A warm engine stopping after its idle time leaves its freed pages too (Chromium's thread above all).
    const unwatchEngines = onEngineStopped(() => heapTrim.poke());
    // Before the routes: its onResponse hook must see every one of them.
    ctx.registry = await installMetrics(app);
    installDrainGuard(app);

    // Routes that read multipart themselves without naming limits (branding logo, library upload, feature
    // import) take files plus at most a name: without these, 200 fields of 1 MB each were held in memory.
    // The tool routes name their own limits (http/uploads.ts).
    await app.register(multipart, { limits: { fileSize: config.maxUploadMb * 1048576, fields: 20, fieldSize: 64 * 1024 } });
    installErrorHandling(app, config.maxUploadMb);
    installBodyTypes(app);
    installCompression(app);

    installHostGuard(app, config);
    installQuotaRelease(app);
    const limiter = new RateLimiter((request) => ctx.limits.peekUser(request.user).rateLimitPerMinute);
    app.addHook('onRequest', async (request, reply) => {
      const url = request.routeOptions.url;
      // Unknown routes fall through to the 404 handler.
      if (!url) return limiter.check(request, reply);
      if (request.routeOptions.config?.public || PUBLIC_PREFIXES.some((p) => url.startsWith(p))) {
        if (!config.authEnabled) request.user = await ctx.auth.identify(request, reply);
        return limiter.check(request, reply);
      }
      const user = await ctx.auth.identify(request, reply);
      if (!user) limiter.check(request, reply);
      if (!user)
        throw new KilnError(
          'UNAUTHORIZED',
          'Credentials required: send Authorization: Bearer <session token or API key> (POST /api/auth/login gives a token).',
        );
      request.user = user;
      limiter.check(request, reply);
    });
    // After the credentials check: a caller without them learns nothing about the routes' parameters.
    installSingleQueryValues(app);

    for (const plugin of Object.values(routeModules) as FastifyPluginAsync[]) await app.register(plugin);

    jobs.startSweeper((e) => app.log.error({ err: e }, 'job sweep failed'));
    await watchFolders.start();
    await features.start();
    // Runs end (recorded as failed) before connections are closed, so progress streams get their final event.
    app.addHook('preClose', async () => {
      await watchFolders.close();
      await features.stop();
      await jobs.close();
      unwatchEngines();
      heapTrim.close();
    });
    app.addHook('onClose', async () => {
      await storage.close().catch(() => {});
      await store.close().catch(() => {});
    });
    await app.ready();
    return app;
  } catch (e) {
    await store.close().catch(() => {});
    throw e;
  }
}
