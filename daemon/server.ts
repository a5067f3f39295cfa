/**
 * buildServer(config): the whole daemon as a fastify app, not yet listening. `kiln serve` and the
 * HTTP tests both call it.
 */
import multipart from '@fastify/multipart';
import Fastify, { type FastifyInstance, type FastifyPluginAsync } from 'fastify';
import { InstallQueue } from '../src/ai/install/queue.js';
import { KilnError } from '../src/core/errors.js';
import { audit } from './accounts/audit.js';
import { Authenticator } from './auth/authenticate.js';
import { ensureAdmin } from './auth/bootstrap.js';
import type { DaemonConfig } from './config.js';
import type { DaemonContext } from './context.js';
import { installErrorHandling } from './http/errors.js';
import { loggerOptions } from './http/logging.js';
import { installDrainGuard } from './drain.js';
import { installMetrics } from './metrics.js';
import { instanceIdFor, JobService } from './jobs/service.js';
import { createQueue } from './queue/create.js';
import * as routeModules from './routes/list.js';
import { openStore } from './store/db.js';
import { deleteExpiredSessions } from './store/sessions.js';
import { localLeases, redisLeases } from './watch/lock.js';
import { WatchFolders } from './watch/service.js';

/** Documentation routes are readable without credentials (they hold no user data). */
const PUBLIC_PREFIXES = ['/api/docs'];

export interface RegisteredRoute {
  method: string;
  url: string;
}
const registered = new WeakMap<FastifyInstance, RegisteredRoute[]>();

/** Every route the app registered (fastify paths, HEAD included): the OpenAPI coverage test compares them with the document. */
export function registeredRoutes(app: FastifyInstance): readonly RegisteredRoute[] {
  return registered.get(app) ?? [];
}

export async function buildServer(config: DaemonConfig): Promise<FastifyInstance> {
  const app = Fastify({
    ...loggerOptions(config.logger),
    bodyLimit: 10 * 1024 * 1024,
    // Long uploads and SSE streams must not be cut by the default timeouts.
    requestTimeout: 0,
    forceCloseConnections: true,
    // Download URLs carry the output's file name (up to 255 bytes, percent-encoded up to three times
    // longer): fastify's default of 100 answered 414 for outputs of long or non-Latin file names.
    routerOptions: { maxParamLength: 1024 },
  });
  // Before any plugin, so routes of every plugin are seen (onRoute cannot be added once routes exist).
  const routes: RegisteredRoute[] = [];
  registered.set(app, routes);
  app.addHook('onRoute', (r) => {
    for (const method of [r.method].flat()) routes.push({ method, url: r.url });
  });
  const store = await openStore({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  try {
    const bootstrap = await ensureAdmin(store, config);
    const instanceId = await instanceIdFor(config.dataDir, !!config.redisUrl);
    const queue = await createQueue(config, instanceId);
    const jobs = new JobService(store, queue, config, instanceId, app.log);
    await jobs.recover().catch(async (e) => {
      await queue.close();
      throw e;
    });
    await deleteExpiredSessions(store.db);
    const leases = config.redisUrl ? await redisLeases(config.redisUrl, config.redisPrefix, instanceId) : localLeases();
    const watchFolders = new WatchFolders(store, jobs, leases, app.log);
    const features = new InstallQueue(config.dataDir, (e) => {
      const event = e.type === 'installed' ? 'feature.installed' : 'feature.failed';
      audit(store.db, { event, target: e.bundle, details: { by: e.by, via: e.via, error: e.error } }).catch((err) =>
        app.log.error({ err }, 'audit of a feature install failed'),
      );
    });
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
    };
    app.decorate('kiln', ctx);
    // Before the routes: its onResponse hook must see every one of them.
    ctx.registry = await installMetrics(app);
    installDrainGuard(app);

    await app.register(multipart, { limits: { fileSize: config.maxUploadMb * 1048576 } });
    installErrorHandling(app, config.maxUploadMb);

    app.addHook('onRequest', async (request) => {
      const url = request.routeOptions.url;
      // Unknown routes fall through to the 404 handler.
      if (!url) return;
      if (request.routeOptions.config?.public || PUBLIC_PREFIXES.some((p) => url.startsWith(p))) {
        if (!config.authEnabled) request.user = await ctx.auth.identify(request);
        return;
      }
      const user = await ctx.auth.identify(request);
      if (!user)
        throw new KilnError(
          'UNAUTHORIZED',
          'Credentials required: send Authorization: Bearer <session token or API key> (POST /api/auth/login gives a token).',
        );
      request.user = user;
    });

    for (const plugin of Object.values(routeModules) as FastifyPluginAsync[]) await app.register(plugin);

    jobs.startSweeper((e) => app.log.error({ err: e }, 'job sweep failed'));
    await watchFolders.start();
    await features.start();
    // Runs end (recorded as failed) before connections are closed, so progress streams get their final event.
    app.addHook('preClose', async () => {
      await watchFolders.close();
      await features.stop();
      await jobs.close();
    });
    app.addHook('onClose', async () => {
      await store.close().catch(() => {});
    });
    await app.ready();
    return app;
  } catch (e) {
    await store.close().catch(() => {});
    throw e;
  }
}
