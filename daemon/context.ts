/**
 * What the routes share, hung on the fastify instance as `app.kiln`. Later features (file library,
 * accounts) add their services here through the optional hooks rather than new globals.
 */
import type { FastifyRequest } from 'fastify';
import type { Registry } from 'prom-client';
import type { InstallQueue } from '../src/ai/install/queue.js';
import type { InputFile } from '../src/core/tool.js';
import type { Authenticator, AuthUser } from './auth/authenticate.js';
import type { BootstrapResult } from './auth/bootstrap.js';
import type { DaemonConfig } from './config.js';
import type { ConnectionStats } from './http/connection-caps.js';
import type { LiveLimits } from './http/limits.js';
import type { MemoryInputs } from './http/memory-inputs.js';
import type { StreamCaps } from './http/stream-caps.js';
import type { JobService } from './jobs/service.js';
import type { ObjectStorage } from './storage/storage.js';
import type { Store } from './store/db.js';
import type { JobRow } from './store/jobs.js';
import type { WatchFolders } from './watch/service.js';

/** Implemented by the file library: a run may take its input from, and save its output to, a library item. */
export interface FileLibraryHook {
  /** Copies (or links) the item's current version into `inDir` and describes it as an input. */
  resolveInput(user: AuthUser, fileId: string, inDir: string, request: FastifyRequest): Promise<InputFile>;
  /** Saves a finished job's output as a new version of the item; returns the saved file id. */
  saveOutput(user: Pick<AuthUser, 'id' | 'role'>, fileId: string, job: JobRow): Promise<string>;
}

export interface DaemonContext {
  config: DaemonConfig;
  store: Store;
  auth: Authenticator;
  jobs: JobService;
  startedAt: number;
  bootstrap: BootstrapResult;
  fileLibrary?: FileLibraryHook;
  watchFolders: WatchFolders;
  /** Set on SIGTERM: new work is refused with 503 while running jobs finish (daemon/drain.ts). */
  draining: boolean;
  /** Feature bundle installs of this instance's data dir (src/ai/install/queue.ts). */
  features: InstallQueue;
  /** Prometheus registry (daemon/metrics.ts). */
  registry: Registry;
  /** Encrypts secrets stored in the database (daemon/auth/data-key.ts). */
  dataKey: Buffer;
  /** Blobs: local disk under sharedDir, or S3 (daemon/storage). */
  storage: ObjectStorage;
  /** Upload size, quotas, rate limit, TTLs as set now (settings, team overrides, environment). */
  limits: LiveLimits;
  /** Connections open now and refused so far (http/connection-caps.ts). */
  connections: () => ConnectionStats;
  /** Event streams open per caller (http/stream-caps.ts): SSE routes take a place before they answer. */
  streams: StreamCaps;
  /** The budget of uploads held in memory; undefined when scaled or MEMORY_INPUTS_MB=0 (http/memory-inputs.ts). */
  memoryInputs?: MemoryInputs;
}

declare module 'fastify' {
  interface FastifyInstance {
    kiln: DaemonContext;
  }
}
