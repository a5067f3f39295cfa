/**
 * Services of the scale-out tests: whether PostgreSQL and Redis answer, a PostgreSQL schema made for
 * one run, and s3rver (an S3-protocol server keeping its objects in a directory) on a free port.
 */
import { randomBytes } from 'node:crypto';

/** PostgreSQL (trust) and Redis on this machine, unless KILN_TEST_PG_URL / KILN_TEST_REDIS_URL name others. */
export const TEST_PG_URL = process.env.KILN_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const TEST_REDIS_URL = process.env.KILN_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Why PostgreSQL cannot be used here, or undefined when it answers. */
export async function pgUnavailable(pgUrl: string): Promise<string | undefined> {
  const { default: pg } = await import('pg');
  const c = new pg.Client({ connectionString: pgUrl, connectionTimeoutMillis: 3000 });
  try {
    await c.connect();
    await c.query('select 1');
    return undefined;
  } catch (e) {
    return `PostgreSQL not reachable at ${pgUrl}: ${(e as Error).message}`;
  } finally {
    await c.end().catch(() => {});
  }
}

/** Why the scaled suites cannot run here, or undefined when PostgreSQL and Redis both answer. */
export async function unavailable(pgUrl: string, redisUrl: string): Promise<string | undefined> {
  const pgProblem = await pgUnavailable(pgUrl);
  if (pgProblem) return pgProblem;
  const { Redis } = await import('ioredis');
  const r = new Redis(redisUrl, { lazyConnect: true, connectTimeout: 3000, maxRetriesPerRequest: 1, retryStrategy: () => null });
  r.on('error', () => {});
  try {
    await r.connect();
    await r.ping();
  } catch (e) {
    return `Redis not reachable at ${redisUrl}: ${(e as Error).message}`;
  } finally {
    r.disconnect();
  }
  return undefined;
}

/** A schema of its own in the PostgreSQL database; `url` selects it, `drop()` removes it. */
export async function pgSchema(pgUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const schema = `kiln_t_${randomBytes(6).toString('hex')}`;
  const { default: pg } = await import('pg');
  const run = async (q: string) => {
    const c = new pg.Client({ connectionString: pgUrl });
    await c.connect();
    try {
      await c.query(q);
    } finally {
      await c.end();
    }
  };
  await run(`CREATE SCHEMA ${schema}`);
  const u = new URL(pgUrl);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return { url: u.toString(), drop: () => run(`DROP SCHEMA IF EXISTS ${schema} CASCADE`) };
}

export interface S3Server {
  endpoint: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Object-created events in order: `ObjectCreated:Put` for a single PUT, `ObjectCreated:Post` for a completed multipart upload. */
  events: { name: string; key: string }[];
  close(): Promise<void>;
}

/** s3rver on 127.0.0.1 and a free port, with one empty bucket, keeping its objects under `dir`. */
export async function startS3(dir: string): Promise<S3Server> {
  const { default: S3rver } = await import('s3rver');
  const bucket = 'kiln-test';
  const server = new S3rver({ port: 0, address: '127.0.0.1', directory: dir, silent: true, configureBuckets: [{ name: bucket }] });
  const events: S3Server['events'] = [];
  server.on('event', (e) => {
    const records = (e as { Records: { eventName: string; s3: { object: { key: string } } }[] }).Records;
    for (const r of records) events.push({ name: r.eventName, key: decodeURIComponent(r.s3.object.key) });
  });
  const { port } = (await server.run()) as { port: number };
  // s3rver's fixed credentials: it checks request signatures against them.
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    events,
    close: () => server.close(),
  };
}
