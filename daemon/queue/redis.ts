/**
 * Scaled mode's queue (REDIS_URL): a BullMQ queue of serialisable jobs that every instance's worker
 * takes from (JOB_CONCURRENCY per instance), pub/sub channels for job events and cancel requests,
 * and a heartbeat key per instance so the others can tell when it died. Tasks that must run here
 * (batch items streamed into this response, runs with a local follow-up) go through an in-process
 * queue of the same concurrency.
 */
import type { Job, Queue, Worker } from 'bullmq';
import type { Redis, RedisOptions } from 'ioredis';
import { KilnError } from '../../src/core/errors.js';
import { InProcessQueue } from './in-process.js';
import type { BusHandler, DistributedQueue, QueuedJob, QueueState, WorkerOutcome } from './queue.js';

export interface RedisQueueOptions {
  url: string;
  prefix: string;
  concurrency: number;
  instanceId: string;
  heartbeatMs: number;
}

const QUEUE_NAME = 'jobs';
const CONNECT_TIMEOUT_MS = 5000;
const COMMAND_TIMEOUT_MS = 5000;

/** BullMQ refuses integer-looking custom ids; ours are hex and could be all digits. */
const bullId = (jobId: string) => `run-${jobId}`;

function channels(prefix: string) {
  return {
    events: `${prefix}:kiln:events`,
    cancel: `${prefix}:kiln:cancel`,
    alive: (instanceId: string) => `${prefix}:kiln:instance:${instanceId}`,
    lease: (name: string) => `${prefix}:kiln:lease:${name}`,
  };
}

/** Renews the lease when this instance holds it, takes it when nobody does: 1 when held after the call. */
const LEASE_SCRIPT = `
if redis.call('get', KEYS[1]) == ARGV[1] then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 1
end
if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
return 0`;
/** Lets go of a lease only if this instance holds it. */
const UNLEASE_SCRIPT = `
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0`;

async function connect(url: string, extra: RedisOptions = {}): Promise<Redis> {
  const { Redis } = await import('ioredis');
  // BullMQ's blocking commands need maxRetriesPerRequest null; every other caller bounds its own waits.
  const r = new Redis(url, { maxRetriesPerRequest: null, connectTimeout: CONNECT_TIMEOUT_MS, lazyConnect: true, ...extra });
  // Errors surface through the commands that fail; an unhandled 'error' event would crash the daemon.
  r.on('error', () => {});
  try {
    await withTimeout(r.connect(), CONNECT_TIMEOUT_MS, 'connect');
  } catch (e) {
    r.disconnect();
    throw new KilnError('UNAVAILABLE', `Redis at ${redactUrl(url)} does not answer: ${(e as Error).message}`, { cause: e });
  }
  return r;
}

function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'REDIS_URL';
  }
}

/**
 * A queue command bounded like the enqueue: with Redis away ioredis holds commands until it is back
 * (maxRetriesPerRequest null), which left a cancel hanging; this fails with UNAVAILABLE instead.
 */
function bounded<T>(p: Promise<T>, what: string): Promise<T> {
  return withTimeout(p, COMMAND_TIMEOUT_MS, what).catch((e: Error) => {
    throw e instanceof KilnError ? e : new KilnError('UNAVAILABLE', `The job queue (Redis) is unavailable: ${e.message}`, { cause: e });
  });
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

export class RedisJobQueue implements DistributedQueue {
  readonly distributed = true as const;
  private readonly local: InProcessQueue;
  private readonly active = new Map<string, AbortController>();
  private readonly names;
  private worker?: Worker;
  private workerConnection?: Redis;
  private heartbeat?: NodeJS.Timeout;
  private eventHandlers: BusHandler[] = [];
  private cancelHandlers: ((jobId: string) => void)[] = [];
  private closed = false;
  private paused = false;

  private constructor(
    private readonly o: RedisQueueOptions,
    private readonly client: Redis,
    private readonly subscriber: Redis,
    private readonly queue: Queue,
  ) {
    this.local = new InProcessQueue(o.concurrency);
    this.names = channels(o.prefix);
  }

  static async open(o: RedisQueueOptions): Promise<RedisJobQueue> {
    const client = await connect(o.url);
    let subscriber: Redis | undefined;
    try {
      subscriber = await connect(o.url);
      const { Queue } = await import('bullmq');
      const queue = new Queue(QUEUE_NAME, { connection: client, prefix: o.prefix });
      queue.on('error', () => {});
      const q = new RedisJobQueue(o, client, subscriber, queue);
      await q.beat();
      q.heartbeat = setInterval(() => q.beat().catch(() => {}), o.heartbeatMs);
      q.heartbeat.unref();
      const names = channels(o.prefix);
      subscriber.on('message', (channel: string, message: string) => {
        if (channel === names.events) for (const h of q.eventHandlers) h(message);
        else if (channel === names.cancel) {
          q.cancel(message);
          for (const h of q.cancelHandlers) h(message);
        }
      });
      await subscriber.subscribe(names.events, names.cancel);
      return q;
    } catch (e) {
      client.disconnect();
      subscriber?.disconnect();
      throw e instanceof KilnError ? e : new KilnError('UNAVAILABLE', `Redis queue unusable: ${(e as Error).message}`, { cause: e });
    }
  }

  /** The key lives three beats, so one slow beat does not declare the instance dead. */
  private async beat(): Promise<void> {
    await this.client.set(this.names.alive(this.o.instanceId), String(Date.now()), 'PX', this.o.heartbeatMs * 3);
  }

  async isAlive(instanceId: string): Promise<boolean> {
    if (instanceId === this.o.instanceId) return !this.closed;
    return (await bounded(this.client.exists(this.names.alive(instanceId)), 'checking a heartbeat')) === 1;
  }

  run<T>(jobId: string, task: (signal: AbortSignal) => Promise<T>): Promise<T> {
    return this.local.run(jobId, task);
  }

  private leases = new Set<string>();

  async lead(name: string, ttlMs: number): Promise<boolean> {
    if (this.closed) return false;
    const held =
      (await withTimeout(
        this.client.eval(LEASE_SCRIPT, 1, this.names.lease(name), this.o.instanceId, String(Math.max(1, Math.round(ttlMs)))),
        COMMAND_TIMEOUT_MS,
        'taking a lease',
      )) === 1;
    if (held) this.leases.add(name);
    else this.leases.delete(name);
    return held;
  }

  async enqueue(job: QueuedJob): Promise<void> {
    if (this.closed) throw new KilnError('UNAVAILABLE', 'The daemon is shutting down.');
    // Outcomes live in the database: the queue only hands the job over, so it keeps no record of it.
    // Bounded: while Redis is away the request fails instead of hanging. Should the add still land
    // later, the worker finds the job's record already failed and skips it.
    await bounded(this.queue.add('run', job, { jobId: bullId(job.id), removeOnComplete: true, removeOnFail: true }), 'queueing the job');
  }

  async remove(jobId: string): Promise<boolean> {
    const job = await bounded(this.queue.getJob(bullId(jobId)), 'looking up the job');
    if (!job) return false;
    // Waiting jobs go; one a worker holds is locked and stays (the cancel message stops it).
    return (await bounded(this.queue.remove(bullId(jobId)), 'removing the job')) === 1;
  }

  async has(jobId: string): Promise<boolean> {
    return (await bounded(this.queue.getJob(bullId(jobId)), 'looking up the job')) !== undefined;
  }

  async missing(jobIds: string[]): Promise<string[]> {
    if (jobIds.length === 0) return [];
    // A BullMQ job is a hash at <prefix>:jobs:<bull id> while any state (waiting, delayed, active) holds it.
    const p = this.client.pipeline();
    for (const id of jobIds) p.exists(this.queue.toKey(bullId(id)));
    const replies = (await bounded(p.exec(), 'checking queued jobs')) ?? [];
    return jobIds.filter((_, i) => {
      const [err, n] = replies[i] ?? [new Error('no reply')];
      if (err) throw err;
      return n === 0;
    });
  }

  process(handler: (job: QueuedJob, signal: AbortSignal) => Promise<WorkerOutcome>): void {
    if (this.worker) throw new Error('the worker is already running');
    void import('bullmq').then(({ Worker, DelayedError }) => {
      if (this.closed) return;
      this.workerConnection = this.client.duplicate({ maxRetriesPerRequest: null });
      this.workerConnection.on('error', () => {});
      this.worker = new Worker(
        QUEUE_NAME,
        async (job: Job<QueuedJob>, token?: string) => {
          // BullMQ's pause does not interrupt a fetch already waiting: a job it brings in after the
          // pause goes back to the queue for another instance.
          if (this.paused && token) {
            await job.moveToDelayed(Date.now() + 20, token);
            throw new DelayedError();
          }
          const ac = new AbortController();
          // Registered before the handler claims the job, so a cancel that sees it running finds it here.
          this.active.set(job.data.id, ac);
          let outcome: WorkerOutcome;
          try {
            outcome = await handler(job.data, ac.signal);
          } finally {
            this.active.delete(job.data.id);
          }
          // Handed back (this instance is stopping): waiting again, for whichever worker is free next.
          if (outcome === 'hand-back' && token) {
            await job.moveToDelayed(Date.now(), token);
            throw new DelayedError();
          }
        },
        {
          connection: this.workerConnection,
          prefix: this.o.prefix,
          concurrency: this.o.concurrency,
          // A job whose worker died is not run again: the heartbeat reaper has recorded it as failed.
          maxStalledCount: 0,
        },
      );
      this.worker.on('error', () => {});
    });
  }

  /** Stops taking jobs from the shared queue (runs in progress go on); for draining an instance. */
  async pauseWorker(): Promise<void> {
    this.paused = true;
    await this.waitForWorker();
    await this.worker!.pause(true);
  }

  async stopIntake(): Promise<void> {
    await this.pauseWorker();
  }

  resumeWorker(): void {
    this.paused = false;
    this.worker?.resume();
  }

  private async waitForWorker(): Promise<void> {
    for (let i = 0; !this.worker && i < 200; i++) await new Promise((r) => setTimeout(r, 10));
    if (!this.worker) throw new Error('the worker did not start');
  }

  async publishEvent(message: string): Promise<void> {
    await this.client.publish(this.names.events, message);
  }

  onEvent(fn: BusHandler): void {
    this.eventHandlers.push(fn);
  }

  async publishCancel(jobId: string): Promise<void> {
    await bounded(this.client.publish(this.names.cancel, jobId), 'sending the cancel request');
  }

  onCancel(fn: (jobId: string) => void): void {
    this.cancelHandlers.push(fn);
  }

  cancel(jobId: string): boolean {
    const ac = this.active.get(jobId);
    if (ac) {
      ac.abort();
      return true;
    }
    return this.local.cancel(jobId);
  }

  state(): QueueState {
    const local = this.local.state();
    return { kind: 'redis', concurrency: this.o.concurrency, running: local.running + this.active.size, queued: local.queued };
  }

  async sharedCounts(): Promise<QueueState['shared']> {
    const c = await withTimeout(this.queue.getJobCounts('waiting', 'prioritized', 'delayed', 'active'), 2000, 'queue counts').catch(
      () => undefined,
    );
    return c && { waiting: (c.waiting ?? 0) + (c.prioritized ?? 0) + (c.delayed ?? 0), active: c.active ?? 0 };
  }

  async ping(): Promise<void> {
    if (this.closed) throw new KilnError('UNAVAILABLE', 'The queue is closed.');
    await withTimeout(this.client.ping(), 2000, 'Redis ping');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.heartbeat);
    for (const ac of this.active.values()) ac.abort();
    await this.local.close();
    // Waits for the aborted runs to record their end (their handlers still publish events).
    // A tool slow to honour the abort must not hold the shutdown: after a while the worker lets go
    // (the reaper, or the next start, records what is left).
    if (this.worker)
      await withTimeout(this.worker.close(), 15_000, 'closing the worker').catch(() => this.worker!.close(true).catch(() => {}));
    // BullMQ leaves connections it was handed open.
    this.workerConnection?.disconnect();
    await this.client.del(this.names.alive(this.o.instanceId)).catch(() => {});
    // Another instance takes over the periodic tasks at its next pass, not when the lease lapses.
    for (const name of this.leases) await this.client.eval(UNLEASE_SCRIPT, 1, this.names.lease(name), this.o.instanceId).catch(() => {});
    await this.queue.close().catch(() => {});
    this.subscriber.disconnect();
    await this.client.quit().catch(() => this.client.disconnect());
  }
}

/** Removes everything kiln keeps under `prefix` (tests, or retiring a deployment). */
export async function purgeRedisPrefix(url: string, prefix: string): Promise<void> {
  const r = await connect(url);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await r.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      cursor = next;
      if (keys.length) await r.del(...keys);
    } while (cursor !== '0');
  } finally {
    await r.quit().catch(() => r.disconnect());
  }
}
