/**
 * Daemon configuration: command-line flags over environment variables over defaults. One plain object
 * so tests can build a server with exactly the settings they want.
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { KilnError } from '../src/core/errors.js';
import { defaultDataDir } from '../src/core/paths.js';
import { resolveAccountsConfig, type AccountsConfig } from './accounts/config.js';
import { resolveS3Settings, type S3Settings } from './storage/config.js';

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
  /** With object storage: how often an instance looks for AI bundles another instance installed (BUNDLE_SYNC_S). */
  bundleSyncS: number;
  /*
   * Defaults of the live limits (daemon/http/limits.ts): PUT /api/v1/settings and per-team overrides
   * change them without a restart; these environment values apply where nothing is set.
   */
  /** How long finished outputs are kept (OUTPUT_TTL_HOURS; JOB_TTL_HOURS is its old name). */
  outputTtlHours: number;
  /** How long finished job records are kept, outputs gone or not (JOB_RECORD_TTL_HOURS; never less than the output TTL). */
  jobRecordTtlHours: number;
  /** How often expired outputs, job records and sessions are swept (SWEEP_INTERVAL_S). */
  sweepIntervalS: number;
  maxUploadMb: number;
  /** The file library's quota per user (LIBRARY_QUOTA_MB; 0 = no quota). */
  libraryQuotaMb: number;
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
  /** SECRET_KEY: the data key (daemon/auth/data-key.ts); unset → `secret.key` in the shared dir. */
  secretKey?: string;
  /**
   * fastify's trustProxy (TRUST_PROXY): false (default), true, a hop count, or a comma-separated list of
   * proxy addresses/CIDRs. Only then is X-Forwarded-For believed for the client address.
   */
  trustProxy: boolean | number | string;
  /** Largest text field of a multipart request (MAX_FIELD_KB). */
  maxFieldKb: number;
  /**
   * All text fields of one multipart request together (MAX_TEXT_KB), counted as they arrive. Default:
   * 4 × MAX_FIELD_KB, at most 4096 unless one field alone may be larger.
   */
  maxTextKb: number;
  /** Largest multipart request, all parts together (MAX_REQUEST_MB). */
  maxRequestMb: number;
  /** Largest AI bundle archive POST /api/v1/admin/features/import takes (FEATURE_IMPORT_MAX_MB). */
  featureImportMaxMb: number;
  /** Request bodies held in memory at once for tools that read uploads from there (MEMORY_INPUTS_MB; 0 = none). */
  memoryInputsMb: number;
  /** Free space below which a data, shared or temp dir makes readyz answer 503 (MIN_FREE_DISK_MB; 0 = never). */
  minFreeDiskMb: number;
  /**
   * Quiet time after the last job before the SQLite log is checkpointed and the C heap's free pages go
   * back to the system (HEAP_TRIM_MS; 0 = never).
   */
  heapTrimMs: number;
  /** Job inputs and outputs one user may hold until they are swept (USER_QUOTA_MB; 0 = no quota). */
  userQuotaMb: number;
  /** Time a client has to send its request headers (HEADERS_TIMEOUT_S). */
  headersTimeoutS: number;
  /** Time a request body may stall before the connection is closed (BODY_IDLE_TIMEOUT_S). */
  bodyIdleTimeoutS: number;
  /** Time a client has to send a whole request, body included (REQUEST_TIMEOUT_S). */
  requestTimeoutS: number;
  /** Bytes a second a request body must average over each BODY_RATE_WINDOW_S (MIN_BODY_RATE_BPS; 0 = no minimum). */
  minBodyRateBps: number;
  bodyRateWindowS: number;
  /** Connections open at once in all (MAX_CONNECTIONS; 0 = no cap; default: three quarters of the open-file limit, at most 4096). */
  maxConnections: number;
  /** Connections open at once from one client address (MAX_CONNECTIONS_PER_ADDRESS; 0 = no cap). */
  maxConnectionsPerAddress: number;
  /** Event streams open at once per user, or per address when anonymous (MAX_STREAMS_PER_USER; 0 = no cap). */
  maxStreamsPerUser: number;
  /** Requests per minute per user (per address when anonymous), bursts up to as many (RATE_LIMIT_PER_MINUTE; 0 = off). */
  rateLimitPerMinute: number;
  /** Object storage (S3_BUCKET and friends, daemon/storage/config.ts); unset: blobs under sharedDir. */
  s3?: S3Settings;
  /**
   * Host names the daemon is reached by besides loopback names and IP literals (PUBLIC_HOSTS, comma
   * separated). Requests naming another Host, and state-changing requests from another site's Origin,
   * are refused: always with AUTH_ENABLED=false, and with auth on once this is set (daemon/http/host-guard.ts).
   */
  publicHosts: string[];
  /** HTTPS with this certificate and key (TLS_CERT_FILE, TLS_KEY_FILE; PEM files). */
  tlsCertFile?: string;
  tlsKeyFile?: string;
  /** HTTPS with a certificate the daemon makes and keeps in DATA_DIR/tls (TLS_SELF_SIGNED=true). */
  tlsSelfSigned: boolean;
}

export interface ConfigFlags {
  port?: string | number;
  host?: string;
  dataDir?: string;
  allowOpenNetwork?: boolean;
}

function num(env: NodeJS.ProcessEnv, name: string, def: number, min = 0, max = Infinity): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return def;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min || n > max)
    throw new KilnError('USAGE_ERROR', `${name} must be a number ≥ ${min}${max < Infinity ? ` and ≤ ${max}` : ''} (got "${raw}").`);
  return n;
}

/** A number above zero, at most `max` (`num` bounds only inclusively). */
function positive(env: NodeJS.ProcessEnv, name: string, def: number, max = Infinity): number {
  const n = num(env, name, def, 0, max);
  if (n === 0) throw new KilnError('USAGE_ERROR', `${name} must be a number above 0 (got "${env[name]}").`);
  return n;
}

/**
 * Three quarters of the process's open-file limit (Linux: /proc/self/limits), at most 4096: the rest stays
 * for uploads, outputs, the database and engine pipes. 1000 where the limit cannot be read.
 */
function defaultMaxConnections(): number {
  try {
    const m = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    if (m) return m[1] === 'unlimited' ? 4096 : Math.max(16, Math.min(4096, Math.floor(Number(m[1]) * 0.75)));
  } catch {
    /* not Linux */
  }
  return 1000;
}

/** TRUST_PROXY: true/false, a hop count, or addresses/CIDRs of the proxies (fastify's trustProxy). */
function trustProxy(env: NodeJS.ProcessEnv): boolean | number | string {
  const raw = env.TRUST_PROXY?.trim();
  if (!raw) return false;
  if (/^(true|yes|on)$/i.test(raw)) return true;
  if (/^(false|no|off)$/i.test(raw)) return false;
  if (/^\d{1,2}$/.test(raw)) return Number(raw);
  if (raw.split(',').every((p) => /^[0-9a-f.:]+(\/\d{1,3})?$/i.test(p.trim()) || /^(loopback|linklocal|uniquelocal)$/.test(p.trim())))
    return raw;
  throw new KilnError(
    'USAGE_ERROR',
    `TRUST_PROXY must be true, false, a hop count, or proxy addresses/CIDRs separated by commas (got "${raw}").`,
  );
}

/** PUBLIC_HOSTS: `kiln.example.com, files.example.org` (a port or an https:// prefix is tolerated). */
function hostList(env: NodeJS.ProcessEnv, name: string): string[] {
  const out: string[] = [];
  for (const raw of (env[name] ?? '').split(/[\s,]+/).filter(Boolean)) {
    let host: string;
    try {
      host = new URL(raw.includes('://') ? raw : `http://${raw}`).hostname.toLowerCase();
    } catch {
      host = '';
    }
    if (!host || !/^(\[[0-9a-f:.]+\]|[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*)$/.test(host))
      throw new KilnError('USAGE_ERROR', `${name} must list host names separated by commas (got "${raw}").`);
    out.push(host);
  }
  return out;
}

function bool(env: NodeJS.ProcessEnv, name: string, def: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return def;
  if (/^(true|1|yes|on)$/i.test(raw)) return true;
  if (/^(false|0|no|off)$/i.test(raw)) return false;
  throw new KilnError('USAGE_ERROR', `${name} must be true or false (got "${raw}").`);
}

/** Text is buffered whole and may be parsed as JSON (several times its size in memory): keep the total small. */
function defaultTextKb(fieldKb: number): number {
  return Math.max(fieldKb, Math.min(4 * fieldKb, 4096));
}

export function resolveConfig(flags: ConfigFlags = {}, env: NodeJS.ProcessEnv = process.env): DaemonConfig {
  const dataDir = path.resolve(flags.dataDir ?? defaultDataDir(env));
  const outputTtlHours = env.OUTPUT_TTL_HOURS?.trim() ? num(env, 'OUTPUT_TTL_HOURS', 24, 0.01) : num(env, 'JOB_TTL_HOURS', 24, 0.01);
  const port = flags.port !== undefined ? Number(flags.port) : num(env, 'PORT', 1349);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new KilnError('USAGE_ERROR', `The port must be an integer 0-65535 (got "${flags.port ?? env.PORT}").`);
  return {
    port,
    host: flags.host ?? env.HOST ?? '127.0.0.1',
    dataDir,
    sharedDir: env.SHARED_DIR ? path.resolve(env.SHARED_DIR) : dataDir,
    authEnabled: bool(env, 'AUTH_ENABLED', true),
    // Above zero (a session over as it is issued would sign everyone out at once) and at most ten years
    // (far beyond, the expiry is no valid date and every sign-in failed with 500).
    sessionDurationHours: positive(env, 'SESSION_DURATION_HOURS', 168, 24 * 3650),
    adminUsername: env.ADMIN_USERNAME || 'admin',
    adminPassword: env.ADMIN_PASSWORD || undefined,
    syncWaitMs: num(env, 'SYNC_WAIT_MS', 10_000),
    bundleSyncS: num(env, 'BUNDLE_SYNC_S', 60, 1),
    outputTtlHours,
    jobRecordTtlHours: Math.max(outputTtlHours, num(env, 'JOB_RECORD_TTL_HOURS', 168, 0.01)),
    sweepIntervalS: num(env, 'SWEEP_INTERVAL_S', 600, 10),
    maxUploadMb: num(env, 'MAX_UPLOAD_MB', 2048, 0),
    libraryQuotaMb: num(env, 'LIBRARY_QUOTA_MB', 1024, 0),
    jobConcurrency: Math.max(1, Math.floor(num(env, 'JOB_CONCURRENCY', os.availableParallelism(), 1))),
    databaseUrl: env.DATABASE_URL || undefined,
    redisUrl: env.REDIS_URL || undefined,
    redisPrefix: env.REDIS_PREFIX || 'kiln',
    // Whole milliseconds up to an hour: Redis takes 3 × this as an integer PX expiry, and refused a
    // fraction or a huge value only once the daemon started ("ERR value is not an integer").
    heartbeatMs: Math.round(num(env, 'KILN_HEARTBEAT_MS', 5000, 50, 3_600_000)),
    allowOpenNetwork: flags.allowOpenNetwork === true || bool(env, 'ALLOW_OPEN_NETWORK', false),
    allowPostScript: bool(env, 'ALLOW_POSTSCRIPT', false),
    metricsToken: env.METRICS_TOKEN || undefined,
    logger: bool(env, 'KILN_HTTP_LOG', false),
    sseHeartbeatMs: num(env, 'KILN_SSE_HEARTBEAT_MS', 15_000, 10),
    accounts: resolveAccountsConfig(env),
    secretKey: env.SECRET_KEY || undefined,
    trustProxy: trustProxy(env),
    maxFieldKb: num(env, 'MAX_FIELD_KB', 1024, 1),
    maxTextKb: num(env, 'MAX_TEXT_KB', defaultTextKb(num(env, 'MAX_FIELD_KB', 1024, 1)), 1),
    maxRequestMb: num(env, 'MAX_REQUEST_MB', 4096, 1),
    memoryInputsMb: num(env, 'MEMORY_INPUTS_MB', 64, 0),
    minFreeDiskMb: num(env, 'MIN_FREE_DISK_MB', 256, 0),
    // Read here, not at the import: a bad value used to be ignored (8192 MB) without a word.
    featureImportMaxMb: positive(env, 'FEATURE_IMPORT_MAX_MB', 8192),
    heapTrimMs: num(env, 'HEAP_TRIM_MS', 1000, 0),
    userQuotaMb: num(env, 'USER_QUOTA_MB', 10240, 0),
    headersTimeoutS: num(env, 'HEADERS_TIMEOUT_S', 30, 0.1),
    bodyIdleTimeoutS: num(env, 'BODY_IDLE_TIMEOUT_S', 60, 0.1),
    requestTimeoutS: num(env, 'REQUEST_TIMEOUT_S', 3600, 0.1),
    minBodyRateBps: num(env, 'MIN_BODY_RATE_BPS', 1024, 0),
    bodyRateWindowS: num(env, 'BODY_RATE_WINDOW_S', 10, 0.1),
    maxConnections: num(env, 'MAX_CONNECTIONS', defaultMaxConnections(), 0),
    maxConnectionsPerAddress: num(env, 'MAX_CONNECTIONS_PER_ADDRESS', 128, 0),
    maxStreamsPerUser: Math.ceil(num(env, 'MAX_STREAMS_PER_USER', 64, 0)),
    rateLimitPerMinute: num(env, 'RATE_LIMIT_PER_MINUTE', 6000, 0),
    s3: resolveS3Settings(env),
    publicHosts: hostList(env, 'PUBLIC_HOSTS'),
    tlsCertFile: env.TLS_CERT_FILE ? path.resolve(env.TLS_CERT_FILE) : undefined,
    tlsKeyFile: env.TLS_KEY_FILE ? path.resolve(env.TLS_KEY_FILE) : undefined,
    tlsSelfSigned: bool(env, 'TLS_SELF_SIGNED', false),
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
