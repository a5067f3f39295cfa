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

export async function pipelineRunCommand(ref: string, inputs: string[], o: { output?: string; json?: boolean; quiet?: boolean; force?: boolean; concurrency?: string }): Promise<void> {
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
