/**
 * One MCP server over the catalog, for any transport: tools/list from catalog.ts, tools/call through a
 * runner the front supplies (the CLI's local runner for `kiln mcp`, a daemon job for /api/v1/mcp, a
 * remote daemon for `kiln mcp --server`). Progress goes out as MCP progress notifications, cancellation
 * aborts the run, and every failure is a tool result with `isError` — the server keeps serving.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type Tool as McpTool,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { KilnError, toKilnError } from '../core/errors.js';
import { VERSION } from '../core/version.js';
import { describeEntry, extraKey, inputSchema, type Availability, type FileRefs, type McpEntry } from './catalog.js';

export interface McpCall {
  entry: McpEntry;
  /** `input` as given: one reference, or several for multi-file tools; absent for tools without a file. */
  inputs: string[];
  /** Second files by their tool field (watermark, mask, sig…), as references. */
  extra: Record<string, string[]>;
  settings: Record<string, unknown>;
  /** Paths mode only. */
  output?: string;
  signal: AbortSignal;
  progress(percent: number, stage?: string): void;
}

export interface McpOutput {
  /** Local path (paths mode) … */
  path?: string;
  /** … or a download URL (daemon). */
  url?: string;
  name: string;
  size?: number;
}

export interface McpRunResult {
  outputs: McpOutput[];
  data?: Record<string, unknown>;
  jobId?: string;
}

export interface McpServerOptions {
  entries: McpEntry[];
  refs: FileRefs;
  run(call: McpCall): Promise<McpRunResult>;
  /** Bundle state of a tool; default: everything available. */
  availability?(entry: McpEntry): Promise<Availability>;
}

const OPEN_WORLD = new Set(['html-to-image']);

export function createMcpServer(opts: McpServerOptions): Server {
  const server = new Server({ name: 'kiln', version: VERSION }, { capabilities: { tools: {} } });
  const byName = new Map(opts.entries.map((e) => [e.tool.id, e]));
  const schemas = new Map<string, Record<string, unknown>>();
  const schemaOf = (e: McpEntry) => {
    let s = schemas.get(e.tool.id);
    if (!s) schemas.set(e.tool.id, (s = inputSchema(e, opts.refs)));
    return s;
  };
  const availability = opts.availability ?? (async () => ({ available: true, missingBundles: [] }));

  server.setRequestHandler(anyParams('tools/list'), async (request) => {
    checked(ListToolsRequestSchema, request);
    const tools: McpTool[] = [];
    for (const e of opts.entries) {
      const a = e.bundles.length ? await availability(e) : { available: true, missingBundles: [] };
      tools.push({
        name: e.tool.id,
        title: e.tool.id,
        description: describeEntry(e, a),
        inputSchema: schemaOf(e) as McpTool['inputSchema'],
        annotations: {
          title: e.tool.id,
          readOnlyHint: e.dataOnly,
          destructiveHint: false,
          idempotentHint: e.dataOnly,
          openWorldHint: OPEN_WORLD.has(e.tool.id),
        },
        _meta: { 'kiln/section': e.tool.section, 'kiln/available': a.available, 'kiln/missingBundles': a.missingBundles },
      });
    }
    return { tools };
  });

  server.setRequestHandler(anyParams('tools/call'), async (raw, extra): Promise<CallToolResult> => {
    const request = checked(CallToolRequestSchema, raw);
    const entry = byName.get(request.params.name);
    try {
      if (!entry) throw new KilnError('NOT_FOUND', `No tool named ${request.params.name}; tools/list names them.`);
      const call = splitArguments(entry, request.params.arguments ?? {}, opts.refs);
      const token = request.params._meta?.progressToken;
      let last = -1;
      const result = await opts.run({
        ...call,
        signal: extra.signal,
        progress(percent, stage) {
          if (token === undefined || percent === last) return;
          last = percent;
          extra
            .sendNotification({
              method: 'notifications/progress',
              params: { progressToken: token, progress: percent, total: 100, ...(stage ? { message: stage } : {}) },
            })
            .catch(() => {});
        },
      });
      return success(entry, result);
    } catch (e) {
      const err = toKilnError(e);
      const body = err.toJSON().error;
      return {
        isError: true,
        content: [{ type: 'text', text: `${body.code}: ${body.message}` }],
        structuredContent: { ok: false, error: body },
      };
    }
  });
  return server;
}

/**
 * The SDK parses each request against the schema its handler was registered with before the handler
 * runs, and answers a mismatch (arguments that are a string, an array or null; a name that is no
 * string) as -32603 internal error. A bad request is the client's mistake, -32602 invalid params
 * (JSON-RPC 2.0): handlers are registered with `anyParams` and check the real schema with `checked`.
 */
function anyParams<M extends string>(method: M) {
  return z.object({ method: z.literal(method), params: z.unknown().optional() }).passthrough();
}

function checked<S extends z.ZodType>(schema: S, request: unknown): z.infer<S> {
  const r = schema.safeParse(request);
  if (!r.success)
    throw new McpError(ErrorCode.InvalidParams, `Invalid ${(request as { method?: string }).method} request: ${z.prettifyError(r.error)}`);
  return r.data;
}

function splitArguments(entry: McpEntry, args: Record<string, unknown>, refs: FileRefs): Omit<McpCall, 'signal' | 'progress'> {
  const settings: Record<string, unknown> = { ...args };
  const spec = entry.tool.input;
  const refList = (v: unknown, name: string): string[] => {
    const list = Array.isArray(v) ? v : v === undefined ? [] : [v];
    if (!list.every((x) => typeof x === 'string' && x.length > 0))
      throw new KilnError('VALIDATION_ERROR', `${name}: give ${refs === 'paths' ? 'file paths' : 'library file ids or URLs'} as strings.`, {
        details: [{ path: name, message: 'expected a string' }],
      });
    return list as string[];
  };
  // A tool without a file has no `input` (nor `output` when it writes none, or on the daemon): such an
  // argument stays among the settings, which refuse it as unknown, as the schema says.
  const inputs = spec.kind === 'none' ? [] : refList(settings.input, 'input');
  if (spec.kind !== 'none') delete settings.input;
  if (spec.kind === 'file' && inputs.length !== 1)
    throw new KilnError('VALIDATION_ERROR', `${entry.tool.id} takes one input file in "input".`, {
      details: [{ path: 'input', message: 'required' }],
    });
  const extra: Record<string, string[]> = {};
  for (const x of spec.extra ?? []) {
    const key = extraKey(x.field, x.flag);
    if (settings[key] !== undefined) extra[x.field] = refList(settings[key], key);
    delete settings[key];
  }
  let output: string | undefined;
  if (refs === 'paths' && !entry.dataOnly && settings.output !== undefined) {
    // Ignoring a wrong one would write the result somewhere the caller did not ask for.
    if (typeof settings.output !== 'string' || !settings.output)
      throw new KilnError('VALIDATION_ERROR', 'output: give a file path, or a directory ending in /, as a string.', {
        details: [{ path: 'output', message: 'expected a non-empty string' }],
      });
    output = settings.output;
    delete settings.output;
  }
  return { entry, inputs, extra, settings, output };
}

function success(entry: McpEntry, result: McpRunResult): CallToolResult {
  const where = result.outputs.map((o) => o.path ?? o.url).filter(Boolean);
  const lines = [`${entry.tool.id}: done.`];
  if (where.length) lines.push(`Output: ${where.join(', ')}`);
  // The data whole: a client that reads only the text (the spec asks a tool with structured content to
  // serialize it there too) got the first 2000 characters, invalid JSON, as if it were all (a base64
  // image cut short, OCR text missing its end).
  if (result.data) lines.push(JSON.stringify(result.data));
  return {
    content: [{ type: 'text', text: lines.join('\n') }],
    structuredContent: {
      ok: true,
      ...(result.jobId ? { jobId: result.jobId } : {}),
      outputs: result.outputs,
      ...(result.data ? { data: result.data } : {}),
    },
  };
}
