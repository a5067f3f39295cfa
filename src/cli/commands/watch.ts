/**
 * `kiln watch IN_DIR (--tool ID [tool flags] | --preset ID | --pipeline FILE|NAME) -o OUT_DIR`: the
 * options, then src/cli/watch/folder-runner.ts does the work. A tool's own flags (e.g. --width) come
 * after --tool and are parsed by that tool's generated command, so they have the usual types and errors.
 */
import { statSync } from 'node:fs';
import { KilnError } from '../../core/errors.js';
import type { Tool } from '../../core/tool.js';
import { loadTool } from '../../tools/lazy.js';
import { findPreset, presetTool } from '../../tools/presets.js';
import { buildToolCommand, settingsFromOptions, type ToolCommandOptions } from '../tool-command.js';

export interface WatchCommandOptions {
  tool?: string;
  preset?: string;
  pipeline?: string;
  output?: string;
  settings?: string;
  recursive?: boolean;
  keep?: boolean;
  initial?: boolean;
  jobs?: string;
  stableMs?: string;
  intervalMs?: string;
  json?: boolean;
  quiet?: boolean;
}

function positiveInt(v: string | undefined, flag: string, dflt: number, min = 1): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new KilnError('USAGE_ERROR', `${flag} takes a whole number >= ${min} (got ${v}).`);
  return n;
}

async function chooseTool(
  o: WatchCommandOptions,
  toolArgs: string[],
): Promise<{ tool: Tool; name: string; settings: Record<string, unknown>; zip?: boolean }> {
  const chosen = [o.tool, o.preset, o.pipeline].filter(Boolean).length;
  if (chosen !== 1) throw new KilnError('USAGE_ERROR', 'Name exactly one of --tool ID, --preset ID or --pipeline FILE|NAME.');
  if (o.pipeline) {
    if (toolArgs.length) throw new KilnError('USAGE_ERROR', `Unknown option ${toolArgs[0]}: a pipeline carries its own settings.`);
    const { loadPipelineFile } = await import('./pipeline.js');
    const { pipelineLabel, pipelineTool, validatePipeline } = await import('../../pipelines/pipeline.js');
    const { raw, file } = loadPipelineFile(o.pipeline);
    const { pipeline, steps } = validatePipeline(raw);
    const name = pipelineLabel(pipeline, file);
    return { tool: pipelineTool(steps, name), name, settings: {} };
  }
  const id = (o.tool ?? o.preset)!;
  let tool = o.tool ? await loadTool(id) : undefined;
  if (o.preset) {
    const preset = findPreset(id);
    const base = preset && (await loadTool(preset.tool));
    if (preset && base) tool = presetTool(preset, base);
  }
  if (!tool)
    throw new KilnError(
      'USAGE_ERROR',
      `No ${o.tool ? 'tool' : 'preset'} named ${id}: \`kiln ${o.tool ? 'tools' : 'presets'}\` lists them.`,
    );
  if (tool.input.kind !== 'file')
    throw new KilnError('USAGE_ERROR', `${id} does not take one input file, so it cannot run on each file of a folder.`);
  // The tool's own command parses its flags: same names, types and messages as `kiln <tool>`.
  const cmd = buildToolCommand(tool, id);
  cmd.exitOverride();
  cmd.configureOutput({ writeErr: (s) => process.stderr.write(s) });
  let opts: ToolCommandOptions = {};
  cmd.action((_inputs: string[], parsed: ToolCommandOptions) => {
    opts = parsed;
  });
  try {
    cmd.parse(['watched-file', ...toolArgs, ...(o.settings ? ['--settings', o.settings] : [])], { from: 'user' });
  } catch (e) {
    throw new KilnError('USAGE_ERROR', `--tool ${id}: ${(e as Error).message.replace(/^error: /, '')}`);
  }
  return { tool, name: id, settings: settingsFromOptions(tool, opts), zip: !!opts.zip };
}

export async function watchCommand(inDir: string, o: WatchCommandOptions, toolArgs: string[]): Promise<void> {
  if (!statSync(inDir, { throwIfNoEntry: false })?.isDirectory()) throw new KilnError('NOT_FOUND', `No folder ${inDir} to watch.`);
  if (!o.output) throw new KilnError('USAGE_ERROR', 'Name the output folder: -o OUT_DIR');
  // Outputs written where the scan looks would be taken as new files: processed again and again
  // (-o IN/out --recursive), or refused and moved to .failed/ (-o IN). A sub-folder is fine otherwise.
  const { insideFolder, sameFolder } = await import('../../watch/paths.js');
  if (sameFolder(o.output, inDir) || (o.recursive && insideFolder(inDir, o.output)))
    throw new KilnError(
      'USAGE_ERROR',
      `-o ${o.output} is ${o.recursive ? 'inside ' : ''}the watched folder: its outputs would be taken as new files. Choose a folder outside ${inDir}.`,
    );
  const { tool, name, settings, zip } = await chooseTool(o, toolArgs);
  const { validateRequest } = await import('../../tools/run-tool.js');
  // Bad settings are refused now, not once per arriving file.
  validateRequest(tool, { files: [{ path: 'x', name: 'x', size: 0 }], extra: {} }, settings);
  const ac = new AbortController();
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => ac.abort());
  const { watchFolder } = await import('../watch/folder-runner.js');
  const r = await watchFolder({
    inDir,
    outDir: o.output,
    tool,
    name,
    settings,
    zip,
    recursive: !!o.recursive,
    keep: !!o.keep,
    initial: !!o.initial,
    jobs: positiveInt(o.jobs, '-j/--jobs', 1),
    stableMs: positiveInt(o.stableMs, '--stable-ms', 2000, 0),
    intervalMs: positiveInt(o.intervalMs, '--interval-ms', 1000, 50),
    json: !!o.json,
    quiet: !!o.quiet,
    signal: ac.signal,
  });
  process.exitCode = r.failed ? 5 : 0;
}
