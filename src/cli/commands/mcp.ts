/**
 * `kiln mcp`: the catalog as an MCP server on stdio, for agents. Each call runs like the CLI does (the
 * local runner: same validation, naming, atomic outputs), or on a daemon with --server / a logged-in
 * profile (the remote runner). Nothing but the protocol is written to stdout.
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import { KilnError } from '../../core/errors.js';
import { defaultDataDir } from '../../core/paths.js';
import { SECTIONS, type Section } from '../../core/tool.js';
import type { McpCall, McpOutput, McpRunResult } from '../../mcp/server.js';
import type { ItemResult, LocalRunRequest } from '../local-runner.js';

export interface McpOptions {
  tools?: string;
  section?: string;
  list?: boolean;
  json?: boolean;
  server?: string;
  profile?: string;
  local?: boolean;
  /** Folders the calls may read and write (repeatable); default: the client's roots, else the working directory. */
  root?: string[];
}

function parseFilter(o: McpOptions) {
  let tools: RegExp | undefined;
  if (o.tools) {
    try {
      tools = new RegExp(o.tools);
    } catch {
      throw new KilnError('USAGE_ERROR', `--tools: not a regular expression: ${o.tools}`);
    }
  }
  let sections: Section[] | undefined;
  if (o.section) {
    sections = o.section.split(',').map((s) => s.trim()) as Section[];
    const bad = sections.filter((s) => !(SECTIONS as readonly string[]).includes(s));
    if (bad.length) throw new KilnError('USAGE_ERROR', `--section: no section ${bad.join(', ')}; the sections are ${SECTIONS.join(', ')}.`);
  }
  return { tools, sections };
}

export async function mcpCommand(o: McpOptions): Promise<void> {
  const { catalogEntries } = await import('../../mcp/catalog.js');
  const entries = catalogEntries(parseFilter(o));
  const availability = await bundleAvailability();
  if (o.list) {
    for (const e of entries) {
      const a = await availability(e);
      if (o.json)
        process.stdout.write(
          JSON.stringify({
            name: e.tool.id,
            section: e.tool.section,
            readOnly: e.dataOnly,
            available: a.available,
            missingBundles: a.missingBundles,
          }) + '\n',
        );
      else process.stdout.write(`${e.tool.id}\t${e.tool.section}${a.available ? '' : `\tneeds ${a.missingBundles.join(', ')}`}\n`);
    }
    if (!o.json) process.stderr.write(`${entries.length} tools\n`);
    return;
  }
  if (entries.length === 0) throw new KilnError('USAGE_ERROR', 'No tool matches --tools/--section: the server would expose nothing.');

  const { resolveServer } = await import('../profiles.js');
  const server = o.local ? undefined : resolveServer({ server: o.server, profile: o.profile });
  const { runLocal } = await import('../local-runner.js');
  const { createMcpServer } = await import('../../mcp/server.js');
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');

  // Calls run at once and an agent reads each answer's path later: no call may replace another's
  // output, nor a file that was there before (the schema promises it).
  const claimed = new Set<string>();
  // A client ends its server with SIGTERM (after closing stdin, per the MCP stdio transport), a person
  // with Ctrl-C: the runs under way are stopped and cleaned up first. Dying at once left ffmpeg or
  // LibreOffice running on with nobody to read it, and the run's workspace in the temp folder.
  const { runStop } = await import('../run-stop.js');
  const stop = runStop();
  const running = new Set<Promise<unknown>>();
  const { checkInRoots, defaultRoots, rootsFromUris } = await import('../../mcp/roots.js');
  const fixedRoots = o.root?.length ? o.root.map((r) => path.resolve(r)) : undefined;
  // The client's roots are asked once and again after it says they changed.
  let clientRoots: Promise<string[]> | undefined;
  const allowedRoots = (): Promise<string[]> => {
    if (fixedRoots) return Promise.resolve(fixedRoots);
    if (!mcp.getClientCapabilities()?.roots) return Promise.resolve(defaultRoots());
    clientRoots ??= mcp.listRoots().then(
      (r) => rootsFromUris(r.roots.map((x) => x.uri)),
      () => {
        // Asked again next call; until then nothing is allowed.
        clientRoots = undefined;
        return [];
      },
    );
    return clientRoots;
  };
  const mcp = createMcpServer({
    entries,
    refs: 'paths',
    availability,
    run(call) {
      const p = runCall(call);
      running.add(p);
      return p.finally(() => running.delete(p));
    },
  });
  async function runCall(call: McpCall): Promise<McpRunResult> {
    // Before anything is read: an agent must not have files outside its roots converted and handed back.
    const roots = await allowedRoots();
    for (const p of call.inputs) checkInRoots(roots, p, 'input');
    for (const [field, list] of Object.entries(call.extra)) for (const p of list) checkInRoots(roots, p, field);
    if (call.output) checkInRoots(roots, call.output, 'output');
    const request: LocalRunRequest = {
      tool: call.entry.tool,
      name: call.entry.tool.id,
      inputs: call.inputs.map((p) => path.resolve(p)),
      extra: Object.fromEntries(Object.entries(call.extra).map(([k, v]) => [k, v.map((p) => path.resolve(p))])),
      settings: call.settings,
      output: call.output,
      // A file the agent names that exists is refused, as default and directory outputs never replace a
      // file (they take the next free name): an agent's guess at a free name must not cost the user a file.
      noClobber: namesAFile(call.output),
      // Next to the input by default, named by the CLI's rule, as an agent expects.
      defaultDir: call.inputs[0] ? path.dirname(path.resolve(call.inputs[0])) : process.cwd(),
      claimed,
      quiet: true,
      silent: true,
      concurrency: 1,
      signal: AbortSignal.any([call.signal, stop.signal]),
      onProgress: (p, stage) => call.progress(p, stage),
    };
    const results: ItemResult[] = await (server
      ? (await import('../remote-runner.js')).runRemote({ ...request, server })
      : runLocal(request)
    ).catch((e: unknown) => {
      throw e instanceof KilnError ? forAgents(e) : e;
    });
    const r = results[0];
    if (!r) throw new KilnError('CANCELLED', 'The run was cancelled.');
    if (!r.ok)
      throw forAgents(new KilnError(r.error!.code as never, r.error!.message, { details: r.error!.details, reason: r.error!.reason }));
    return { outputs: outputsOf(r), ...(r.data ? { data: r.data } : {}) };
  }
  const { RootsListChangedNotificationSchema } = await import('@modelcontextprotocol/sdk/types.js');
  mcp.setNotificationHandler(RootsListChangedNotificationSchema, async () => {
    clientRoots = undefined;
  });
  // stdout carries the JSON-RPC messages and nothing else: a library's console.log or console.info
  // (pdf-lib has one) would put a line there that the client cannot read. They go to stderr instead.
  for (const level of ['log', 'info', 'debug'] as const) console[level] = (...args: unknown[]) => console.error(...args);
  const transport = new StdioServerTransport();
  // The SDK drops a line it cannot read (no JSON, no JSON-RPC message) and tells only onerror: the
  // client would wait for an answer for ever. JSON-RPC answers it with id null.
  transport.onerror = (e) => {
    const code = e instanceof SyntaxError ? -32700 : e?.name === 'ZodError' ? -32600 : undefined;
    if (code === undefined) return;
    const message = code === -32700 ? `Parse error: ${e.message}` : 'Invalid Request: not a JSON-RPC 2.0 message';
    transport.send({ jsonrpc: '2.0', id: null, error: { code, message } } as never).catch(() => {});
  };
  const closed = new Promise<void>((resolve) => {
    transport.onclose = resolve;
    process.stdin.once('end', resolve);
    stop.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  await mcp.connect(transport);
  process.stderr.write(`kiln mcp: serving ${entries.length} tools on stdio${server ? ` (runs on ${server.url})` : ''}\n`);
  await closed;
  await mcp.close().catch(() => {});
  // The runs end (their children killed, workspaces removed) before the process does.
  await Promise.allSettled([...running]);
  const code = stop.exitCode();
  if (code !== undefined) process.exitCode = code;
}

/**
 * The files a run wrote, each with its own path and size. A tool that writes several (pdf-to-image,
 * split-pdf…) has `output` naming only their folder and the size of the archive they came in: an agent
 * handed that folder could not tell which files are this call's (an earlier call's may lie beside them).
 */
function outputsOf(r: ItemResult): McpOutput[] {
  const files = r.outputs ?? (r.output && r.output !== '-' ? [r.output] : []);
  if (!r.outputs) return files.map((f) => ({ path: f, name: path.basename(f), size: r.processedSize }));
  return files.map((f) => ({ path: f, name: path.basename(f), size: statSync(f, { throwIfNoEntry: false })?.size }));
}

/** Whether an AI tool's bundles are installed in the local data dir (a remote server says so itself). */
async function bundleAvailability() {
  const { missingBundles } = await import('../../ai/features.js');
  const dataDir = defaultDataDir();
  return async (e: { bundles: string[] }) => {
    const missing = await missingBundles(dataDir, e.bundles);
    return { available: missing.length === 0, missingBundles: missing };
  };
}

/** An `output` that names one file (not a directory, existing or ending in /, nor a %d pattern). */
function namesAFile(output: string | undefined): boolean {
  if (!output || /[/\\]$/.test(output) || /%\d*d/.test(output)) return false;
  return !statSync(output, { throwIfNoEntry: false })?.isDirectory();
}

/** The CLI's advice for an output that exists (choose another -o, --force) names flags an agent cannot pass. */
function forAgents(e: KilnError): KilnError {
  if (e.code !== 'OUTPUT_EXISTS') return e;
  const what = e.message.replace(/;[^;]*$/, '').replace(/ and --no-clobber is set$/, '');
  return new KilnError('OUTPUT_EXISTS', `${what}; name another output (kiln mcp never replaces a file).`, {
    details: e.details,
    reason: e.reason,
  });
}
