/**
 * Runs a tool on local files: one run per input for single-file tools (a batch on all cores), one run
 * for multi-file tools. Each run gets its own workspace, removed afterwards; outputs are moved into
 * place atomically, so an interrupted run never leaves a half-written file.
 */
import { createWriteStream, existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { KilnError, toKilnError, EXIT } from '../core/errors.js';
import { defaultDataDir } from '../core/paths.js';
import { readsInputInMemory, type InputFile, type Tool, type ToolInputs } from '../core/tool.js';
import { createWorkspace, type Workspace } from '../core/workspace.js';
import { inputFile, runTool, validateRequest } from '../tools/run-tool.js';
import { deliverOutput, namingOrder, runDelivery } from './deliver.js';
import { formatFromOutputName } from './output-format.js';
import { parseOutputOption, type OutputTarget } from './output-naming.js';
import { createProgress } from './progress.js';
import { inFlagWords } from './tool-command.js';

export interface LocalRunRequest {
  tool: Tool;
  /** Displayed tool name (preset id for presets). */
  name: string;
  inputs: string[];
  extra: Record<string, string[]>;
  settings: Record<string, unknown>;
  output?: string;
  json?: boolean;
  quiet?: boolean;
  /** May replace an input file. */
  force?: boolean;
  /** --no-clobber: never replace an existing file (the default replaces earlier outputs). */
  noClobber?: boolean;
  /** --zip: a multi-output tool's ZIP is written whole instead of as separate files. */
  zip?: boolean;
  concurrency?: number;
  signal: AbortSignal;
  /** Progress for a caller that draws its own view (the interactive mode): percent of the run or the batch. */
  onProgress?: (percent: number, stage?: string) => void;
  /** Data-only tools print their JSON on stdout when no -o is given; false writes the file instead. */
  printData?: boolean;
  /** Never write to stdout (`kiln mcp` speaks its protocol there): data stays in the result only. */
  silent?: boolean;
  /** Where outputs go when no -o is given (default: the current directory). */
  defaultDir?: string;
  /** Destinations claimed by earlier and concurrent runs: never replaced (`kiln mcp`, `kiln watch`; see deliver.ts). */
  claimed?: Set<string>;
  /** Settings errors name the command-line flags (`--left is required`), not the settings. */
  flagWords?: boolean;
}

export interface ItemResult {
  input: string | null;
  ok: boolean;
  output?: string;
  /** Every file written, when a multi-output tool wrote several (`output` is then their directory or pattern). */
  outputs?: string[];
  originalSize?: number;
  processedSize?: number;
  data?: Record<string, unknown>;
  error?: { code: string; message: string; details?: unknown; reason?: string };
  /** Remote runs on a library item: the item the output was saved to, or why saving it failed. */
  savedFileId?: string;
  afterSuccessError?: { code: string; message: string };
  exitCode: number;
}

/** Expands globs the shell left alone (quoted, or Windows-style use): `*` and `?` in the last path part. */
export async function expandInputs(args: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const a of args) {
    if (a === '-' || existsSync(a) || !/[*?]/.test(path.basename(a))) {
      out.push(a);
      continue;
    }
    const dir = path.dirname(a);
    const re = new RegExp(
      '^' +
        path
          .basename(a)
          .replace(/[.+^${}()|[\]\\]/g, '\\$&')
          .replace(/\*/g, '.*')
          .replace(/\?/g, '.') +
        '$',
    );
    const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => re.test(n)).sort();
    if (names.length === 0) throw new KilnError('NOT_FOUND', `No file matches ${a}`);
    out.push(...names.map((n) => (dir === '.' ? n : path.join(dir, n))));
  }
  return out;
}

/**
 * `-`: stdin copied to a file (local and remote runs). Ctrl-C or SIGTERM while it is still coming (a
 * terminal, a slow pipe) stops the copy: kiln used to go on waiting for the end of stdin.
 */
export async function spoolStdin(dest: string, signal: AbortSignal): Promise<void> {
  await pipeline(process.stdin, createWriteStream(dest), { signal });
}

async function resolveInput(arg: string, dir: string, signal: AbortSignal): Promise<InputFile> {
  if (arg !== '-') return inputFile(path.resolve(arg), path.basename(arg));
  const p = path.join(dir, 'stdin');
  await spoolStdin(p, signal);
  return inputFile(p, 'stdin');
}

export async function runLocal(req: LocalRunRequest): Promise<ItemResult[]> {
  const { tool } = req;
  const dataDir = defaultDataDir();
  const groups: string[][] = tool.input.kind === 'file' ? req.inputs.map((i) => [i]) : [req.inputs];
  if (tool.input.kind === 'file' && req.inputs.length === 0) throw new KilnError('USAGE_ERROR', `kiln ${req.name} needs an input file.`);
  if (req.inputs.filter((i) => i === '-').length > 1) throw new KilnError('USAGE_ERROR', 'stdin (-) can be read once.');
  const target: OutputTarget = parseOutputOption(req.output, groups.length, {
    stdinInput: req.inputs.includes('-') && !req.json && !req.silent,
    json: req.json,
  });
  // The output's name decides its format (`-o out.png`): set it now for tools that have a format setting.
  const settings = target.kind === 'file' ? formatFromOutputName(tool, req.name, req.settings, target.path!) : req.settings;
  const delivery = runDelivery(req, target, dataDir);

  // Settings errors are the same for every item: report once, before any work.
  try {
    validateRequest(
      tool,
      {
        files: groups[0]!.map((p) => ({ path: p, name: p, size: 0 })),
        extra: Object.fromEntries(Object.entries(req.extra).map(([k, v]) => [k, v.map((p) => ({ path: p, name: p, size: 0 }))])),
      },
      settings,
    );
  } catch (e) {
    throw req.flagWords ? inFlagWords(toKilnError(e), tool) : e;
  }

  const batch = groups.length > 1;
  const progress = createProgress({
    quiet: req.quiet || req.json,
    total: groups.length,
    label: req.name,
    unit: batch ? 'items' : 'percent',
  });
  const results: ItemResult[] = new Array(groups.length);
  const naming = namingOrder(groups.map((g) => (g.length === 1 ? g[0]! : null)));
  let done = 0;
  let next = 0;
  const workers = Math.max(1, Math.min(groups.length, req.concurrency ?? defaultConcurrency(tool)));

  const runOne = async (i: number, ws: Workspace) => {
    const group = groups[i]!;
    const label = group.length === 1 ? group[0]! : null;
    try {
      const files = await Promise.all(group.map((g) => resolveInput(g, ws.dir, req.signal)));
      const extra: ToolInputs['extra'] = {};
      for (const [field, paths] of Object.entries(req.extra))
        extra[field] = await Promise.all(paths.map((p) => resolveInput(p, ws.dir, req.signal)));
      const outcome = await runTool(tool, { files, extra }, settings, {
        workDir: ws.dir,
        dataDir,
        signal: req.signal,
        onProgress: batch
          ? undefined
          : (p, stage) => {
              progress.update(p, stage);
              req.onProgress?.(p, stage);
            },
      });
      let outPath: string | undefined;
      let outputs: string[] | undefined;
      let processedSize = outcome.processedSize;
      if (outcome.output) {
        if (target.kind === 'stdout' && req.silent)
          throw new KilnError('USAGE_ERROR', 'Standard output is not available here: name an output file or directory.');
        if (
          target.kind === 'default' &&
          outcome.data &&
          outcome.output.contentType === 'application/json' &&
          (req.printData !== false || req.silent)
        ) {
          // Data-only tools print their JSON when no -o is given (with --json it is in the result line).
          if (!req.json && !req.silent) process.stdout.write(JSON.stringify(outcome.data, null, 2) + '\n');
        } else {
          await naming.turn(i);
          const d = await deliverOutput(outcome.output, { ...delivery, inputName: label ?? undefined, workDir: ws.dir });
          outPath = d.output;
          outputs = d.outputs;
          if (d.processedSize !== undefined) processedSize = d.processedSize;
        }
      }
      results[i] = {
        input: label,
        ok: true,
        output: outPath,
        ...(outputs ? { outputs } : {}),
        originalSize: outcome.originalSize,
        processedSize,
        ...(outcome.data ? { data: outcome.data } : {}),
        exitCode: EXIT.OK,
      };
    } catch (e) {
      const err = req.flagWords ? inFlagWords(toKilnError(e), tool) : toKilnError(e);
      results[i] = { input: label, ok: false, error: err.toJSON().error, exitCode: err.exitCode };
    } finally {
      naming.done(i);
      await ws.clear();
      done++;
      if (batch) {
        progress.update(done);
        req.onProgress?.(Math.round((done / groups.length) * 100), `${done}/${groups.length}`);
      }
      if (req.json && !req.silent) process.stdout.write(JSON.stringify(stripExit(results[i]!)) + '\n');
    }
  };

  // One workspace per worker, emptied between its items (see emptyDir in core/workspace.ts).
  await Promise.all(
    Array.from({ length: workers }, async () => {
      const ws = await createWorkspace();
      try {
        while (next < groups.length && !req.signal.aborted) await runOne(next++, ws);
      } finally {
        await ws.dispose();
      }
    }),
  );
  progress.stop();
  return results.filter(Boolean);
}

/**
 * Runs at once in a local batch: one per core, and one more for the image tools that declare inMemory
 * (resize, convert, compress, crop…: sharp in this process, no program started). Each of their runs
 * waits on the file system a few times (its workspace, the output's rename and delivery, the clean-up)
 * while its core idles; the extra run fills those gaps (100 × 3 MP resize on 2 cores: 1.65 → 1.52 s).
 * Tools that run a program (ffmpeg, LibreOffice) or a model keep one per core: their runs hardly wait,
 * and each holds far more memory.
 */
function defaultConcurrency(tool: Tool): number {
  return os.availableParallelism() + (readsInputInMemory(tool) ? 1 : 0);
}

/** The --json line of an item: everything but the internal exit code. */
export function stripExit(r: ItemResult): Omit<ItemResult, 'exitCode'> {
  const { exitCode: _exit, ...rest } = r;
  return rest;
}

/** `--concurrency N` of a batch (tools and pipelines): a whole number >= 1, or undefined for the default. */
export function parseConcurrency(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new KilnError('USAGE_ERROR', `--concurrency takes a whole number >= 1 (got "${raw}").`);
  return n;
}

export function batchExitCode(results: ItemResult[]): number {
  const failed = results.filter((r) => !r.ok);
  if (failed.length === 0) return EXIT.OK;
  if (results.length === 1) return failed[0]!.exitCode;
  if (failed.length === results.length && failed.every((f) => f.exitCode === failed[0]!.exitCode)) return failed[0]!.exitCode;
  return EXIT.PARTIAL;
}
