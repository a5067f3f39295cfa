/**
 * A real kiln daemon for HTTP tests: temp data dir, port 0, an admin signed in. With KILN_TEST_PG set
 * (a PostgreSQL URL), each server gets its own schema in that database, dropped on close, so the same
 * suites run against PostgreSQL.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { resolveConfig, type DaemonConfig } from '../../daemon/config.js';
import { buildServer } from '../../daemon/server.js';
import { pgSchema, startS3 } from './scale.js';

export interface TestServer {
  url: string;
  /** Session token of the admin (empty when auth is disabled). */
  token: string;
  adminPassword: string;
  app: FastifyInstance;
  config: DaemonConfig;
  dataDir: string;
  /** Stops this server and starts a new one on the same data dir and database. */
  restart(): Promise<TestServer>;
  /** Stops the server and removes its data (and its PostgreSQL schema). */
  close(): Promise<void>;
}

export interface StartOptions {
  /** Environment variables for the daemon (PORT, SYNC_WAIT_MS, AUTH_ENABLED, …). */
  env?: Record<string, string>;
  /** Leave ADMIN_PASSWORD unset so the first start generates one. */
  generatePassword?: boolean;
  /** Use this data dir (it is not removed on close) instead of a new temp one. */
  dataDir?: string;
}

async function s3For(dataDir: string): Promise<{ env: Record<string, string>; close(): Promise<void> }> {
  const server = await startS3(mkdtempSync(path.join(path.dirname(dataDir), 'kiln-s3-')));
  process.env.AWS_ACCESS_KEY_ID ??= server.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY ??= server.secretAccessKey;
  return {
    env: { S3_ENDPOINT: server.endpoint, S3_BUCKET: server.bucket, S3_FORCE_PATH_STYLE: 'true', S3_REGION: 'us-east-1' },
    close: () => server.close(),
  };
}

export async function login(url: string, username: string, password: string): Promise<string> {
  const res = await fetch(`${url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { token: string }).token;
}

export async function startServer(opts: StartOptions = {}): Promise<TestServer> {
  const dataDir = opts.dataDir ?? mkdtempSync(path.join(process.env.KILN_TMP_DIR ?? tmpdir(), 'kiln-daemon-'));
  const pg = process.env.KILN_TEST_PG ? await pgSchema(process.env.KILN_TEST_PG) : undefined;
  // KILN_TEST_S3=1: every server keeps its blobs in a bucket of its own s3rver (the suites on object storage);
  // 0 (scripts/test.mjs's switch to skip that pass) means off, as unset.
  const s3 = process.env.KILN_TEST_S3 && process.env.KILN_TEST_S3 !== '0' ? await s3For(dataDir) : undefined;
  const adminPassword = opts.generatePassword ? '' : randomBytes(12).toString('hex');
  const env: Record<string, string> = {
    ADMIN_USERNAME: 'admin',
    ...(adminPassword ? { ADMIN_PASSWORD: adminPassword } : {}),
    ...(pg ? { DATABASE_URL: pg.url } : {}),
    ...(s3?.env ?? {}),
    JOB_CONCURRENCY: '2',
    // A test that expects a synchronous answer must not get 202 because a loaded machine made the job
    // outlast the default 10-s window (a cold LibreOffice start, seen in the metrics test); tests of the
    // window itself set their own.
    SYNC_WAIT_MS: '120000',
    ...opts.env,
  };
  const cleanup = async () => {
    await s3?.close();
    if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    await pg?.drop();
  };
  let knownPassword = adminPassword;
  const start = async (): Promise<TestServer> => {
    const config = resolveConfig({ port: 0, host: '127.0.0.1', dataDir }, env);
    const app = await buildServer(config);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as { port: number };
    const url = `http://127.0.0.1:${port}`;
    const password = (knownPassword ||= app.kiln.bootstrap.generatedPassword ?? '');
    const token = config.authEnabled && password ? await login(url, 'admin', password) : '';
    return {
      url,
      token,
      adminPassword: password,
      app,
      config,
      dataDir,
      async restart() {
        await app.close();
        return start();
      },
      async close() {
        await app.close();
        await cleanup();
      },
    };
  };
  try {
    return await start();
  } catch (e) {
    await cleanup();
    throw e;
  }
}

// Multipart bodies and server-sent events, shared by the HTTP suites.

export async function filePart(p: string, name = path.basename(p)): Promise<Blob> {
  const b = await readFile(p);
  return new File([b], name);
}

export async function form(
  fields: Record<string, string | Blob | (string | Blob)[]>,
  names: Record<string, string> = {},
): Promise<FormData> {
  const fd = new FormData();
  for (const [k, v] of Object.entries(fields)) {
    for (const item of Array.isArray(v) ? v : [v]) {
      if (typeof item === 'string') fd.append(k, item);
      else fd.append(k, item, (item as File).name ?? names[k] ?? 'upload');
    }
  }
  return fd;
}

/**
 * A resize job held queued (202) behind a blocker in the daemon's only slot (JOB_CONCURRENCY=1,
 * SYNC_WAIT_MS=0) until release(): for tests of streams, cancels and waits on a job not yet run.
 */
export async function heldJob(s: TestServer, image: string, width = 40): Promise<{ jobId: string; release: () => Promise<void> }> {
  let free = () => {};
  const blocker = s.app.kiln.jobs.queue.run(`blocker-${Math.random()}`, () => new Promise<void>((r) => (free = r)));
  const res = await fetch(`${s.url}/api/v1/tools/image/resize`, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.token}` },
    body: await form({ file: await filePart(image), settings: JSON.stringify({ width }) }),
  });
  if (res.status !== 202) throw new Error(`expected 202, got ${res.status}: ${await res.text()}`);
  const { jobId } = (await res.json()) as { jobId: string };
  return {
    jobId,
    release: async () => {
      free();
      await blocker;
    },
  };
}

/** An MCP `initialize` POSTed to the daemon's /api/v1/mcp as it is, for the HTTP-level checks an SDK client hides. */
export function mcpInitialize(base: string, token?: string): Promise<Response> {
  return fetch(`${base}/api/v1/mcp`, {
    method: 'POST',
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'kiln-test', version: '1' } },
    }),
  });
}

export interface SseEvent {
  id?: string;
  event: string;
  data: unknown;
}

/** Reads server-sent events until a `completed` or `failed` event or the stream ends. */
export async function readSse(
  url: string,
  token: string,
  timeoutMs = 20_000,
): Promise<{ events: SseEvent[]; comments: string[]; status: number; contentType: string | null }> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), timeoutMs);
  const res = await fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {}, signal: ac.signal });
  const events: SseEvent[] = [];
  const comments: string[] = [];
  if (!res.body || res.status !== 200) {
    clearTimeout(timer);
    return { events, comments, status: res.status, contentType: res.headers.get('content-type') };
  }
  const decoder = new TextDecoder();
  let buf = '';
  try {
    outer: for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buf += decoder.decode(chunk, { stream: true });
      let i: number;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const e: Partial<SseEvent> & { dataLines: string[] } = { dataLines: [] };
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) comments.push(line.slice(1).trim());
          else if (line.startsWith('id: ')) e.id = line.slice(4);
          else if (line.startsWith('event: ')) e.event = line.slice(7);
          else if (line.startsWith('data: ')) e.dataLines.push(line.slice(6));
        }
        if (e.event) {
          events.push({ id: e.id, event: e.event, data: JSON.parse(e.dataLines.join('\n')) });
          if (e.event === 'completed' || e.event === 'failed') break outer;
        }
      }
    }
  } catch (e) {
    // A server going away ends the stream; what arrived before is the answer.
    if (!/terminated|aborted/i.test((e as Error).message)) throw e;
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
  return { events, comments, status: res.status, contentType: res.headers.get('content-type') };
}

/** One JSON/multipart request with a bearer token; the body is parsed when it is JSON. */
export async function api(
  s: TestServer,
  token: string,
  method: string,
  p: string,
  body?: unknown,
): Promise<{ status: number; body: any; text: string }> {
  const auth = { authorization: `Bearer ${token}` };
  const init: RequestInit = { method, headers: auth };
  if (body instanceof FormData) init.body = body;
  else if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers = { ...auth, 'content-type': 'application/json' };
  }
  const res = await fetch(s.url + p, init);
  const text = await res.text();
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, body: json, text };
}
