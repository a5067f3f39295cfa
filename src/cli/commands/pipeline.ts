/**
 * `kiln pipeline run FILE.json|NAME INPUTS... [-o DIR]` runs a pipeline locally, like a tool: one run per
 * input (or one run for a multi-file first step), same output naming, --json lines and exit codes.
 * `kiln pipeline validate FILE.json` checks it without running. NAME is looked up in
 * `$XDG_CONFIG_HOME/kiln/pipelines/NAME.json`.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { KilnError } from '../../core/errors.js';
import { pipelineLabel, pipelineTool, type ResolvedStep, resolveToolOrPreset, validatePipeline } from '../../pipelines/pipeline.js';
import { batchExitCode, expandInputs, parseConcurrency, runLocal } from '../local-runner.js';
import { writePolicy } from '../output-naming.js';
import { reportResults } from '../report-results.js';
import { runStop } from '../run-stop.js';

export function pipelineDir(): string {
  return path.join(process.env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config'), 'kiln', 'pipelines');
}

/** The local pipeline file a reference names: the path itself, or NAME.json in the pipelines folder. */
export function localPipelineFile(ref: string): string | undefined {
  if (existsSync(ref)) return ref;
  const named = path.join(pipelineDir(), `${ref}.json`);
  return /^[\w.-]+$/.test(ref) && existsSync(named) ? named : undefined;
}

export function loadPipelineFile(ref: string): { raw: unknown; file: string } {
  const file = localPipelineFile(ref) ?? path.join(pipelineDir(), `${ref}.json`);
  if (!existsSync(file)) throw new KilnError('NOT_FOUND', `No pipeline file ${ref} (nor ${file}).`);
  // Reading and parsing fail apart: a directory is not "invalid JSON: EISDIR".
  if (statSync(file).isDirectory()) throw new KilnError('USAGE_ERROR', `${file} is a directory; give a pipeline file (NAME.json).`);
  const text = readFileSync(file, 'utf8');
  try {
    return { raw: JSON.parse(text), file };
  } catch (e) {
    throw new KilnError('VALIDATION_ERROR', `${file} is not valid JSON: ${(e as Error).message}`);
  }
}

export async function pipelineValidateCommand(ref: string, o: { json?: boolean } = {}): Promise<void> {
  const { raw, file } = loadPipelineFile(ref);
  const { pipeline, steps } = validatePipeline(raw);
  if (o.json) {
    const view = steps.map((s) => ({ tool: s.tool.id, settings: s.settings }));
    process.stdout.write(JSON.stringify({ ok: true, name: pipelineLabel(pipeline, file), steps: view }) + '\n');
    return;
  }
  process.stdout.write(`${pipelineLabel(pipeline, file)}: ${steps.length} step(s) valid: ${steps.map((s) => s.tool.id).join(' → ')}\n`);
}

export async function pipelineRunCommand(
  ref: string,
  inputs: string[],
  o: {
    output?: string;
    server?: string;
    profile?: string;
    local?: boolean;
    json?: boolean;
    quiet?: boolean;
    force?: boolean;
    overwrite?: boolean;
    clobber?: boolean;
    zip?: boolean;
    concurrency?: string;
  },
): Promise<void> {
  // As for a tool: `--concurrency abc` was taken as NaN and the batch ran with the default.
  const concurrency = parseConcurrency(o.concurrency);
  // Ctrl-C, SIGTERM and a closed stdout stop the run and clean up (SIGTERM used to leave ffmpeg running).
  const stop = runStop();
  // A pipeline file here runs here; otherwise NAME is a pipeline saved on the server (when there is one).
  const { resolveServer } = await import('../profiles.js');
  const server = localPipelineFile(ref) || o.local ? undefined : resolveServer({ server: o.server, profile: o.profile });
  const { name, steps } = server ? await savedPipeline(ref, o) : localPipeline(ref);
  const tool = pipelineTool(steps, name);
  if (server && !o.quiet) process.stderr.write(`kiln: running the pipeline ${name} saved on ${server.url}\n`);
  const request = {
    tool,
    name,
    inputs: await expandInputs(inputs),
    extra: {},
    settings: {},
    output: o.output,
    json: o.json,
    quiet: o.quiet,
    force: o.force,
    noClobber: writePolicy(o).clobber === false,
    zip: o.zip,
    concurrency,
    signal: stop.signal,
  };
  const results = server
    ? await (await import('../remote-runner.js')).runRemote({
        ...request,
        server,
        route: `/api/v1/pipelines/${encodeURIComponent(ref)}/run`,
      })
    : await runLocal(request);
  const stopped = stop.exitCode();
  if (stopped !== undefined) {
    process.exitCode = stopped;
    return;
  }
  // As a tool run reports: failures, and what the last step left out (data.warnings) unless --quiet.
  if (!o.json) reportResults(results, o);
  process.exitCode = batchExitCode(results);
}

type ServerOpts = Record<string, string | boolean | undefined>;

function localPipeline(ref: string): { name: string; steps: ResolvedStep[] } {
  const { raw, file } = loadPipelineFile(ref);
  const { pipeline, steps } = validatePipeline(raw);
  return { name: pipelineLabel(pipeline, file), steps };
}

/**
 * A pipeline saved on the server, fetched to know what it takes and makes (the server validates it
 * again when it runs; its secret settings come back redacted, so they are not checked here).
 */
async function savedPipeline(ref: string, o: ServerOpts): Promise<{ name: string; steps: ResolvedStep[] }> {
  const c = await serverClient(o);
  const saved = await c.json<SavedPipeline>('GET', `/api/v1/pipelines/${encodeURIComponent(ref)}`);
  const steps = saved.steps.map((s, index) => {
    const tool = resolveToolOrPreset(s.tool);
    if (!tool) throw new KilnError('VALIDATION_ERROR', `The saved pipeline ${saved.name} uses ${s.tool}, which this kiln does not know.`);
    return { index, tool, settings: s.settings };
  });
  return { name: saved.name, steps };
}

async function serverClient(o: ServerOpts) {
  const { resolveServer } = await import('../profiles.js');
  const { connect } = await import('../remote/client.js');
  const server = resolveServer({ server: o.server as string | undefined, profile: o.profile as string | undefined });
  if (!server) throw new KilnError('USAGE_ERROR', 'No server: pass --server URL, set KILN_SERVER, or run `kiln login URL`.');
  return connect(server);
}

interface SavedPipeline {
  id: string;
  name: string;
  description: string | null;
  ownerId: string;
  steps: { tool: string; settings: Record<string, unknown> }[];
  updatedAt: string;
}

/**
 * `kiln pipeline save FILE.json|NAME [--name NAME]` stores the pipeline on the server; one of the same
 * name is replaced. It is validated here first, so a bad file never leaves the machine.
 */
export async function pipelineSaveCommand(ref: string, o: ServerOpts): Promise<void> {
  const { raw, file } = loadPipelineFile(ref);
  const { pipeline } = validatePipeline(raw);
  const body = {
    ...pipeline,
    name: (o.name as string | undefined) ?? pipelineLabel(pipeline, file),
    ...(o.scope ? { scope: o.scope as string } : {}),
  };
  const c = await serverClient(o);
  let saved: SavedPipeline;
  try {
    saved = (await c.postJson('/api/v1/pipelines', body)).body as unknown as SavedPipeline;
  } catch (e) {
    if ((e as KilnError).code !== 'CONFLICT') throw e;
    saved = await c.json<SavedPipeline>('PUT', `/api/v1/pipelines/${encodeURIComponent(body.name)}`, body);
  }
  if (o.json) process.stdout.write(JSON.stringify(saved) + '\n');
  else process.stdout.write(`${saved.id}  ${saved.name}: ${saved.steps.map((s) => s.tool).join(' → ')}\n`);
}

export async function pipelineListCommand(o: ServerOpts): Promise<void> {
  const c = await serverClient(o);
  const qs = o.scope ? `?scope=${encodeURIComponent(o.scope as string)}` : '';
  const { pipelines } = await c.json<{ pipelines: SavedPipeline[] }>('GET', `/api/v1/pipelines${qs}`);
  if (o.json) {
    process.stdout.write(JSON.stringify(pipelines) + '\n');
    return;
  }
  if (!pipelines.length) {
    process.stderr.write('No saved pipelines.\n');
    return;
  }
  const w = Math.max(...pipelines.map((p) => p.name.length));
  for (const p of pipelines) process.stdout.write(`${p.id}  ${p.name.padEnd(w)}  ${p.steps.map((s) => s.tool).join(' → ')}\n`);
}

/** `kiln pipeline rm NAME|ID`: the server's DELETE; an unknown name is NOT_FOUND (exit 1), as `files rm` does. */
export async function pipelineRemoveCommand(ref: string, o: ServerOpts): Promise<void> {
  const c = await serverClient(o);
  const r = await c.json<{ id: string; deleted: boolean }>('DELETE', `/api/v1/pipelines/${encodeURIComponent(ref)}`);
  if (o.json) process.stdout.write(JSON.stringify(r) + '\n');
  else process.stdout.write(`Deleted the pipeline ${ref} (${r.id}).\n`);
}
