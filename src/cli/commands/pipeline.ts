/**
 * `kiln pipeline run FILE.json|NAME INPUTS... [-o DIR]` runs a pipeline locally, like a tool: one run per
 * input (or one run for a multi-file first step), same output naming, --json lines and exit codes.
 * `kiln pipeline validate FILE.json` checks it without running. NAME is looked up in
 * `$XDG_CONFIG_HOME/kiln/pipelines/NAME.json`.
 */
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { KilnError } from '../../core/errors.js';
import { pipelineLabel, pipelineTool, validatePipeline } from '../../pipelines/pipeline.js';
import { batchExitCode, expandInputs, runLocal } from '../local-runner.js';

export function pipelineDir(): string {
  return path.join(process.env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config'), 'kiln', 'pipelines');
}

export function loadPipelineFile(ref: string): { raw: unknown; file: string } {
  const file = existsSync(ref) ? ref : path.join(pipelineDir(), `${ref}.json`);
  if (!existsSync(file)) throw new KilnError('NOT_FOUND', `No pipeline file ${ref} (nor ${file}).`);
  try {
    return { raw: JSON.parse(readFileSync(file, 'utf8')), file };
  } catch (e) {
    throw new KilnError('VALIDATION_ERROR', `${file} is not valid JSON: ${(e as Error).message}`);
  }
}

export async function pipelineValidateCommand(ref: string): Promise<void> {
  const { raw, file } = loadPipelineFile(ref);
  const { pipeline, steps } = validatePipeline(raw);
  process.stdout.write(`${pipelineLabel(pipeline, file)}: ${steps.length} step(s) valid: ${steps.map((s) => s.tool.id).join(' → ')}\n`);
}

export async function pipelineRunCommand(
  ref: string,
  inputs: string[],
  o: { output?: string; json?: boolean; quiet?: boolean; force?: boolean; concurrency?: string },
): Promise<void> {
  const { raw, file } = loadPipelineFile(ref);
  const { pipeline, steps } = validatePipeline(raw);
  const tool = pipelineTool(steps, pipelineLabel(pipeline, file));
  const ac = new AbortController();
  process.once('SIGINT', () => ac.abort());
  const results = await runLocal({
    tool,
    name: pipelineLabel(pipeline, file),
    inputs: await expandInputs(inputs),
    extra: {},
    settings: {},
    output: o.output,
    json: o.json,
    quiet: o.quiet,
    force: o.force,
    concurrency: o.concurrency ? Number(o.concurrency) : undefined,
    signal: ac.signal,
  });
  if (ac.signal.aborted) process.exit(130);
  if (!o.json) for (const r of results) if (!r.ok) process.stderr.write(`kiln: ${r.input ? r.input + ': ' : ''}${r.error!.message}\n`);
  process.exitCode = batchExitCode(results);
}

type ServerOpts = Record<string, string | boolean | undefined>;

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
