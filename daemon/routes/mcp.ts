/**
 * /api/v1/mcp: the catalog's MCP server over the Streamable HTTP transport, behind the same
 * authentication, permissions and limits as every route. Inputs are library file ids or URLs; a call is
 * an ordinary job (listed, cancellable, followed over SSE) whose result carries its download URL.
 * Sessions live on the instance that opened them (a load balancer needs sticky sessions for MCP) and
 * belong to the user who opened them. The MCP SDK (with its own JSON Schema validator and HTTP layer)
 * and the tool list are loaded on the first MCP request: most daemons never serve one.
 */
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { KilnError, type ErrorCode } from '../../src/core/errors.js';
import type { InputFile } from '../../src/core/tool.js';
import type { McpEntry } from '../../src/mcp/catalog.js';
import type { McpCall, McpRunResult } from '../../src/mcp/server.js';
import { missingBundles } from '../../src/ai/features.js';
import { validateRequest } from '../../src/tools/run-tool.js';
import { type AuthUser, requireUser } from '../auth/authenticate.js';
import { requirePermission } from '../auth/permissions.js';
import { downloadUrlInput } from '../http/url-input.js';
import { downloadUrl, jobError, jobResult } from '../jobs/records.js';
import { findTarget } from '../jobs/targets.js';
import { getJob, isFinal } from '../store/jobs.js';

/** An idle session is closed after this long (KILN_MCP_IDLE_MS; default 30 minutes). */
function sessionIdleMs(): number {
  const ms = Number(process.env.KILN_MCP_IDLE_MS);
  return Number.isFinite(ms) && ms > 0 ? ms : 30 * 60_000;
}

/**
 * Sessions one user holds at once on this instance (KILN_MCP_MAX_SESSIONS; default 32; 0 = no cap). Each
 * holds an MCP server and its transport (~50 KB) until it is idle for KILN_MCP_IDLE_MS: 2000 initialize
 * requests of one key held 100 MB, and the request rate allowed millions in the idle time. Past the
 * cap a new session replaces the user's least recently used idle one (clients that never send DELETE
 * keep working); when all of them have a request open, the new one is refused 429.
 */
function maxSessionsPerUser(): number {
  const raw = process.env.KILN_MCP_MAX_SESSIONS;
  const n = Number(raw);
  return raw !== undefined && raw.trim() !== '' && Number.isFinite(n) && n >= 0 ? Math.ceil(n) : 32;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  userId: string;
  /** When its last request ended (or began, while none is open). */
  lastSeen: number;
  /** Requests still open (a call waiting for its job, the GET event stream): the session is not idle. */
  open: number;
}

interface McpModules {
  StreamableHTTPServerTransport: typeof StreamableHTTPServerTransport;
  createMcpServer: typeof import('../../src/mcp/server.js').createMcpServer;
  entries: McpEntry[];
}

async function loadMcp(): Promise<McpModules> {
  const [{ StreamableHTTPServerTransport }, { createMcpServer }, { catalogEntries }] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
    import('../../src/mcp/server.js'),
    import('../../src/mcp/catalog.js'),
  ]);
  return { StreamableHTTPServerTransport, createMcpServer, entries: catalogEntries() };
}

export async function mcpRoutes(app: FastifyInstance): Promise<void> {
  let mcp: Promise<McpModules> | undefined;
  const sessions = new Map<string, Session>();
  const idleMs = sessionIdleMs();
  const maxSessions = maxSessionsPerUser();
  /** Room for one more session of this user: their least recently used idle session goes, or 429. */
  const makeRoom = async (userId: string, reply: FastifyReply) => {
    if (maxSessions === 0) return;
    const mine = [...sessions.values()].filter((s) => s.userId === userId);
    if (mine.length < maxSessions) return;
    const idle = mine.filter((s) => s.open === 0).sort((a, b) => a.lastSeen - b.lastSeen);
    if (idle.length <= mine.length - maxSessions) {
      void reply.header('retry-after', '5');
      throw new KilnError(
        'RATE_LIMITED',
        `You have ${mine.length} MCP sessions with requests open (at most ${maxSessions}, KILN_MCP_MAX_SESSIONS); end one (DELETE /api/v1/mcp) and try again.`,
        { reason: 'mcp-sessions' },
      );
    }
    for (const s of idle.slice(0, mine.length - maxSessions + 1)) await s.transport.close().catch(() => {});
  };
  // Closing a session aborts its calls: one waiting for a long job is not idle.
  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const [, s] of sessions) if (s.open === 0 && now - s.lastSeen > idleMs) void s.transport.close();
    },
    Math.min(60_000, idleMs),
  );
  sweep.unref();
  app.addHook('onClose', async () => {
    clearInterval(sweep);
    await Promise.all([...sessions.values()].map((s) => s.transport.close().catch(() => {})));
  });

  const handle = async (request: FastifyRequest, reply: FastifyReply) => {
    const user = requireUser(request);
    requirePermission(request, 'tools:use');
    const sid = request.headers['mcp-session-id'];
    let session = typeof sid === 'string' ? sessions.get(sid) : undefined;
    if (typeof sid === 'string' && (!session || session.userId !== user.id))
      throw new KilnError('NOT_FOUND', 'No such MCP session (it expired or belongs to someone else): initialize a new one.');
    if (!session) {
      if (request.method !== 'POST') throw new KilnError('VALIDATION_ERROR', 'Start an MCP session with a POST of the initialize request.');
      await makeRoom(user.id, reply);
      mcp ??= loadMcp().catch((e) => {
        mcp = undefined;
        throw e;
      });
      const { StreamableHTTPServerTransport, createMcpServer, entries } = await mcp;
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, session!);
        },
      });
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
      };
      const server = createMcpServer({
        entries,
        refs: 'library',
        availability: async (e) => {
          const missing = await missingBundles(app.kiln.config.dataDir, e.bundles);
          return { available: missing.length === 0, missingBundles: missing };
        },
        run: (call) => runAsJob(app, request, user, call),
      });
      await server.connect(transport);
      session = { transport, userId: user.id, lastSeen: Date.now(), open: 0 };
    }
    // The session's event stream stays open as long as its client keeps it: counted with the job streams.
    if (request.method === 'GET') app.kiln.streams.hold(request, reply);
    const current = session;
    current.lastSeen = Date.now();
    current.open++;
    reply.raw.once('close', () => {
      current.open--;
      current.lastSeen = Date.now();
    });
    reply.hijack();
    await current.transport.handleRequest(request.raw, reply.raw, request.body);
  };
  for (const method of ['POST', 'GET', 'DELETE'] as const) app.route({ method, url: '/api/v1/mcp', handler: handle });
}

async function runAsJob(app: FastifyInstance, request: FastifyRequest, user: AuthUser, call: McpCall): Promise<McpRunResult> {
  const { jobs, store } = app.kiln;
  const target = findTarget(call.entry.tool.id);
  if (!target) throw new KilnError('NOT_FOUND', `No tool named ${call.entry.tool.id}.`);
  const { id, workDir, inDir } = await jobs.allocate();
  try {
    let n = 0;
    const maxBytes = (await app.kiln.limits.forUser(user)).maxUploadMb * 1048576;
    const fetchRef = async (ref: string): Promise<InputFile> => {
      if (/^https?:\/\//i.test(ref)) return downloadUrlInput(ref, inDir, n++, maxBytes, call.signal);
      const library = app.kiln.fileLibrary;
      if (!library) throw new KilnError('VALIDATION_ERROR', 'The file library is not available on this server: give URLs.');
      return library.resolveInput(user, ref, inDir, request);
    };
    const files: InputFile[] = [];
    for (const ref of call.inputs) files.push(await fetchRef(ref));
    const extra: Record<string, InputFile[]> = {};
    for (const [field, refs] of Object.entries(call.extra)) {
      extra[field] = [];
      for (const ref of refs) extra[field].push(await fetchRef(ref));
    }
    const inputs = { files, extra };
    const settings = validateRequest(target.tool, inputs, call.settings);
    await jobs.submit({ id, owner: user, target, settings, inputs, workDir, clientJobId: `mcp:${randomUUID()}` });
  } catch (e) {
    await rm(workDir, { recursive: true, force: true });
    throw e;
  }

  const unsubscribe = jobs.events.subscribe(id, ({ event }) => {
    if (event.type === 'progress') call.progress(event.percent, event.stage);
  });
  const cancel = async () => {
    const row = await getJob(store.db, id);
    if (row && !isFinal(row.status)) await jobs.cancel(row).catch(() => {});
  };
  call.signal.addEventListener('abort', cancel, { once: true });
  try {
    let row = await jobs.wait(id, 60_000);
    while (!row && !call.signal.aborted) row = await jobs.wait(id, 60_000);
    if (!row) throw new KilnError('CANCELLED', 'The run was cancelled.');
    if (row.status !== 'completed') {
      const err = jobError(row);
      throw new KilnError(err.code as ErrorCode, err.message, { details: err.details, reason: err.reason });
    }
    const result = jobResult(row);
    const link = downloadUrl(row);
    const origin = `${request.protocol}://${request.host}`;
    return {
      jobId: id,
      outputs: link ? [{ url: origin + link, name: row.output_name!, size: Number(row.processed_size ?? 0) }] : [],
      ...(result.data ? { data: result.data as Record<string, unknown> } : {}),
    };
  } finally {
    unsubscribe();
    call.signal.removeEventListener('abort', cancel);
  }
}
