/**
 * Daemon configuration: command-line flags over environment variables over defaults. One plain object
 * so tests can build a server with exactly the settings they want.
 */
import os from 'node:os';
import path from 'node:path';
import { KilnError } from '../src/core/errors.js';
import { defaultDataDir } from '../src/core/paths.js';
import { resolveAccountsConfig, type AccountsConfig } from './accounts/config.js';

export interface DaemonConfig {
  port: number;
  host: string;
  dataDir: string;
  /** Job inputs and outputs: the same volume for every instance in scaled mode (default dataDir). */
  sharedDir: string;
  authEnabled: boolean;
  sessionDurationHours: number;
  adminUsername: string;
  adminPassword?: string;
  syncWaitMs: number;
  jobTtlHours: number;
  maxUploadMb: number;
  jobConcurrency: number;
  databaseUrl?: string;
  redisUrl?: string;
  /** Namespace of the queue, channels and heartbeats in Redis (one per deployment). */
  redisPrefix: string;
  /** How often an instance says it is alive in Redis; it counts as dead after 3 missed beats. */
  heartbeatMs: number;
  allowOpenNetwork: boolean;
  /** Read PostScript/EPS uploads (Ghostscript interprets them): off unless ALLOW_POSTSCRIPT=true. */
  allowPostScript: boolean;
  /** Bearer token a Prometheus scraper may use for GET /metrics (besides an admin's credentials). */
  metricsToken?: string;
  /** fastify's logger; off in tests. */
  logger: boolean;
  /** Interval of the SSE keep-alive comment (proxies drop idle streams). */
  sseHeartbeatMs: number;
  /** Login protection and single sign-on (daemon/accounts/config.ts). */
  accounts: AccountsConfig;
}

export interface ConfigFlags {
  port?: string | number;
  host?: string;
  dataDir?: string;
  allowOpenNetwork?: boolean;
}

function num(env: NodeJS.ProcessEnv, name: string, def: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return def;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) throw new KilnError('USAGE_ERROR', `${name} must be a number ≥ ${min} (got "${raw}").`);
  return n;
}

function bool(env: NodeJS.ProcessEnv, name: string, def: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return def;
  if (/^(true|1|yes|on)$/i.test(raw)) return true;
  if (/^(false|0|no|off)$/i.test(raw)) return false;
  throw new KilnError('USAGE_ERROR', `${name} must be true or false (got "${raw}").`);
}

export function resolveConfig(flags: ConfigFlags = {}, env: NodeJS.ProcessEnv = process.env): DaemonConfig {
  const dataDir = path.resolve(flags.dataDir ?? defaultDataDir(env));
  const port = flags.port !== undefined ? Number(flags.port) : num(env, 'PORT', 1349);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new KilnError('USAGE_ERROR', `The port must be an integer 0-65535 (got "${flags.port ?? env.PORT}").`);
  return {
    port,
    host: flags.host ?? env.HOST ?? '127.0.0.1',
    dataDir,
    sharedDir: env.SHARED_DIR ? path.resolve(env.SHARED_DIR) : dataDir,
    authEnabled: bool(env, 'AUTH_ENABLED', true),
    sessionDurationHours: num(env, 'SESSION_DURATION_HOURS', 168, 0),
    adminUsername: env.ADMIN_USERNAME || 'admin',
    adminPassword: env.ADMIN_PASSWORD || undefined,
    syncWaitMs: num(env, 'SYNC_WAIT_MS', 10_000),
    jobTtlHours: num(env, 'JOB_TTL_HOURS', 24),
    maxUploadMb: num(env, 'MAX_UPLOAD_MB', 2048, 0),
    jobConcurrency: Math.max(1, Math.floor(num(env, 'JOB_CONCURRENCY', os.availableParallelism(), 1))),
    databaseUrl: env.DATABASE_URL || undefined,
    redisUrl: env.REDIS_URL || undefined,
    redisPrefix: env.REDIS_PREFIX || 'kiln',
    heartbeatMs: num(env, 'KILN_HEARTBEAT_MS', 5000, 50),
    allowOpenNetwork: flags.allowOpenNetwork === true || bool(env, 'ALLOW_OPEN_NETWORK', false),
    allowPostScript: bool(env, 'ALLOW_POSTSCRIPT', false),
    metricsToken: env.METRICS_TOKEN || undefined,
    logger: bool(env, 'KILN_HTTP_LOG', false),
    sseHeartbeatMs: num(env, 'KILN_SSE_HEARTBEAT_MS', 15_000, 10),
    accounts: resolveAccountsConfig(env),
  };
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}

/** An open daemon on a public interface would let anyone run tools; refuse unless explicitly asked. */
export function checkNetworkSafety(c: DaemonConfig): void {
  if (!c.authEnabled && !isLoopback(c.host) && !c.allowOpenNetwork) {
    throw new KilnError(
      'USAGE_ERROR',
      `Refusing to listen on ${c.host} with AUTH_ENABLED=false: anyone on the network could use it. Bind to 127.0.0.1, enable auth, or pass --allow-open-network (ALLOW_OPEN_NETWORK=true).`,
    );
  }
}
