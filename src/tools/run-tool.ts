/**
 * runTool: the one way a tool runs, for the CLI and the daemon alike. It validates settings, checks
 * input types from their bytes, checks engines and bundles before any work, runs the tool in a
 * private output directory, and packs several outputs (or JSON data) into one deliverable.
 * It lives beside the catalog rather than in core/ because it consults the engine registry
 * (imports run bin → cli → daemon → tools → engines → core).
 */
import { copyFile, mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { regularFile } from '../core/regular-file.js';
import { KilnError, toKilnError } from '../core/errors.js';
import { audioContentType, contentTypeFor } from '../core/mime.js';
import { safeFileName, stem } from '../core/paths.js';
import { parseSettings } from '../core/settings.js';
import { scrubError } from '../core/scrub-paths.js';
import { forgetKind, rememberKind } from '../core/sniffed-kinds.js';
import { onDisk, source } from '../core/input-bytes.js';
import { requireKind } from '../core/sniff.js';
import {
  readsInputInMemory,
  type InputFile,
  type OutputFile,
  type RunContext,
  type Tool,
  type ToolInputs,
  type ToolResult,
} from '../core/tool.js';
import { requireEngine } from '../engines/registry.js';
import { decodesFully } from '../engines/sharp.js';
import { withWarnings } from '../core/warnings.js';
import { outputFile } from './_shared/output.js';

export interface RunOptions {
  /** The run's private directory (a Workspace's dir). Outputs are written under `<workDir>/out` unless outDir says. */
  workDir: string;
  dataDir: string;
  signal?: AbortSignal;
  onProgress?: (percent: number, stage?: string) => void;
  /** Settings already validated (e.g. by the daemon before queueing). */
  validated?: boolean;
  /** Whether PostScript inputs are read (Ghostscript runs them); the daemon refuses them unless allowed. */
  allowPostScript?: boolean;
  /** An existing directory for the outputs instead of `<workDir>/out` (which the run makes). */
  outDir?: string;
  /**
   * Where the single output is moved once the run has succeeded (the daemon's job file, see
   * daemon/jobs/scratch.ts); RunOutcome.output names it there.
   */
  outputTo?: string;
}

export interface RunOutcome {
  /** The deliverable: one file (several outputs are zipped), or undefined for tools that only return data. */
  output?: OutputFile;
  data?: Record<string, unknown>;
  settings: Record<string, unknown>;
  originalSize: number;
  processedSize: number;
}

/** Validation that needs no file: settings, input counts. Used before a job is queued. */
export function validateRequest(tool: Tool, inputs: ToolInputs, rawSettings: unknown): Record<string, unknown> {
  const settings = parseSettings(tool, rawSettings);
  const spec = tool.input;
  const n = inputs.files.length;
  if (spec.kind === 'file' && n !== 1) throw new KilnError('VALIDATION_ERROR', `${tool.id} takes exactly one input file (got ${n}).`);
  if (spec.kind === 'files') {
    if (n < spec.min) throw new KilnError('VALIDATION_ERROR', `${tool.id} needs at least ${spec.min} files (got ${n}).`);
    if (n > spec.max) throw new KilnError('LIMIT_EXCEEDED', `${tool.id} takes at most ${spec.max} files (got ${n}).`);
  }
  if (spec.kind === 'none' && n > 0) throw new KilnError('VALIDATION_ERROR', `${tool.id} takes no input file; give its settings only.`);
  for (const x of spec.extra ?? []) {
    const got = inputs.extra[x.field] ?? [];
    if (x.required && got.length === 0)
      throw new KilnError(
        'VALIDATION_ERROR',
        `${tool.id} needs a second file: ${x.description} (field "${x.field}", CLI --${x.flag ?? x.field}).`,
      );
    if (!x.indexed && got.length > 1) throw new KilnError('VALIDATION_ERROR', `${tool.id} takes one ${x.field} file.`);
  }
  return settings;
}

export async function runTool(tool: Tool, inputs: ToolInputs, rawSettings: unknown, opts: RunOptions): Promise<RunOutcome> {
  const settings = opts.validated ? (rawSettings as Record<string, unknown>) : validateRequest(tool, inputs, rawSettings);
  const signal = opts.signal ?? new AbortController().signal;
  const outDir = opts.outDir ?? path.join(opts.workDir, 'out');
  if (!opts.outDir) await mkdir(outDir, { recursive: true });
  const allInputs = [...inputs.files, ...Object.values(inputs.extra).flat()];
  let remembered = false;
  try {
    await Promise.all((tool.needs?.engines ?? []).map((e) => requireEngine(e)));
    // The bundle checks (and the AI install code they read) load only for tools that declare bundles.
    if (tool.needs?.bundles?.length || tool.needs?.bundlesBySetting)
      await (await import('./bundles.js')).requireRunBundles(opts.dataDir, tool, settings);
    await checkInputs(tool, inputs, opts.allowPostScript !== false);
    // An input held in memory goes over as is only to a tool that reads it through openInput.
    if (!readsInputInMemory(tool)) await Promise.all(allInputs.map(onDisk));
    for (const f of allInputs) if (f.type) rememberKind(f.path, f.type);
    remembered = true;
    await tool.preflight?.(settings, { dataDir: opts.dataDir, inputs });

    const first = inputs.files[0] ?? Object.values(inputs.extra).flat()[0];
    const baseStem = first ? safeFileName(stem(first.name), 'output') : tool.id;
    let lastPct = -1;
    const warnings: string[] = [];
    const ctx: RunContext = {
      workDir: opts.workDir,
      outDir,
      signal,
      dataDir: opts.dataDir,
      progress(percent, stage) {
        const p = Math.max(0, Math.min(100, Math.round(percent)));
        if (p === lastPct && !stage) return;
        lastPct = p;
        opts.onProgress?.(p, stage);
      },
      warn(message) {
        warnings.push(message);
      },
      out(ext, suffix = '', baseName) {
        return path.join(outDir, safeFileName(`${baseName ?? baseStem}${suffix}${ext ? '.' + ext : ''}`));
      },
    };
    ctx.progress(0, 'starting');
    const run = await tool.run(ctx, inputs, settings);
    // Before the tool's own warnings: what was left out of the input comes first.
    warnings.unshift(...(await firstFrameWarnings(tool, allInputs, settings, run)));
    // The main inputs only: a 16-bit logo or overlay on an 8-bit photo cut nothing the photo had.
    if (tool.section === 'image' && !tool.derivedOutput && run.outputs.length === 1)
      await warnDepthCut(tool.id, inputs.files, run.outputs[0]!, ctx);
    const result = { ...run, data: withWarnings(run.data, warnings) };
    if (signal.aborted) throw new KilnError('CANCELLED', 'The run was cancelled.');

    let output: OutputFile | undefined;
    if (result.outputs.length > 1) {
      const zipPath = ctx.out('zip');
      await (await import('../core/zip.js')).zipFiles(result.outputs, zipPath);
      output = outputFile(zipPath);
    } else if (result.outputs.length === 1) {
      output = result.outputs[0]!;
    } else if (result.data) {
      const jsonPath = ctx.out('json');
      await writeFile(jsonPath, JSON.stringify(result.data, null, 2) + '\n');
      output = outputFile(jsonPath);
    }
    let processedSize = 0;
    if (output) {
      const st = await stat(output.path).catch(() => undefined);
      if (!st?.isFile()) throw new KilnError('INTERNAL', `${tool.id} did not write its output.`);
      processedSize = st.size;
      const type = output.contentType || contentTypeFor(output.name);
      output = { ...output, name: safeFileName(output.name), contentType: tool.section === 'audio' ? audioContentType(type) : type };
      if (opts.outputTo) output.path = await moveOutput(output.path, opts.outputTo, output.name);
    }
    ctx.progress(100, 'done');
    const originalSize =
      inputs.files.reduce((a, f) => a + f.size, 0) +
      Object.values(inputs.extra)
        .flat()
        .reduce((a, f) => a + f.size, 0);
    return {
      output,
      data: result.data,
      settings,
      originalSize,
      processedSize,
    };
  } catch (e) {
    // Nothing half-written survives a failed run.
    await emptyDir(outDir);
    if (signal.aborted) throw new KilnError('CANCELLED', 'The run was cancelled.');
    const all = [...inputs.files, ...Object.values(inputs.extra).flat()];
    throw scrubError(
      await nameOversizedInput(await blameInput(toKilnError(e), all), all),
      all.map((f) => ({ path: f.path, name: f.name })),
      [opts.workDir, opts.dataDir, process.env.KILN_TMP_DIR ?? '', tmpdir()],
    );
  } finally {
    if (remembered) for (const f of allInputs) if (f.type) forgetKind(f.path);
  }
}

/**
 * libvips sometimes reports an input it cannot decode as "Unknown error" or as a failed write of the
 * output (seen with truncated PNGs while other jobs ran beside it): before an internal failure is
 * answered, an image input that does not decode completely takes the blame (UNSUPPORTED_INPUT, a 4xx).
 */
async function blameInput(err: KilnError, files: InputFile[]): Promise<KilnError> {
  if (err.code !== 'INTERNAL') return err;
  for (const f of files)
    if ((await decodesFully(source(f), f.type?.ext)) === false)
      return new KilnError('UNSUPPORTED_INPUT', `The input ${f.name} could not be decoded (it is damaged or truncated).`, { cause: err });
  return err;
}

/**
 * sharp refuses an input over KILN_MAX_PIXELS from its header without saying its size: the input that
 * declares too many pixels is named with them ("The image scan.png is 60000×60000 pixels …"), as the
 * formats other engines decode are before they start (image/_shared/declared-size.ts).
 */
async function nameOversizedInput(err: KilnError, files: InputFile[]): Promise<KilnError> {
  if (err.code !== 'LIMIT_EXCEEDED' || !/^The image has more pixels than the limit/.test(err.message)) return err;
  const { refuseOverDeclaredPixels } = await import('./image/_shared/declared-size.js');
  for (const f of files) {
    // An SVG is read only as openInput sanitized it (librsvg would follow what the raw document names).
    if (f.type?.mime.split('/')[0] !== 'image' || f.type.ext === 'svg') continue;
    try {
      await refuseOverDeclaredPixels(f, {}, source(f), { inProcessToo: true });
    } catch (e) {
      if (e instanceof KilnError && e.code === 'LIMIT_EXCEEDED') return e;
    }
  }
  return err;
}

/**
 * Every input's kind from its bytes, refused (UNSUPPORTED_INPUT) unless the tool takes it. runTool calls
 * it; the daemon calls it too before it queues a job, so a wrong file is answered at once, never by a 202.
 */
export async function checkInputs(tool: Tool, inputs: ToolInputs, postscript: boolean): Promise<void> {
  const accept = tool.input.kind === 'none' ? [] : tool.input.accept;
  // Bytes held in memory cannot have changed since the daemon's route checked them: no second look.
  const check = async (f: InputFile, acc: string[], taker?: string) => {
    if (!(f.bytes && f.type)) f.type = await requireKind(source(f), f.name, acc, { postscript, taker });
  };
  await Promise.all(inputs.files.map((f) => check(f, accept, tool.id)));
  for (const x of tool.input.extra ?? []) await Promise.all((inputs.extra[x.field] ?? []).map((f) => check(f, x.accept)));
}

/**
 * Moves the finished output to `to`: a rename, or a copy across file systems. When a directory is at
 * `to` already (the daemon wrote an input held in memory out to `<job>/in` for an engine that reads
 * files), the output goes into its `out/` under its own name.
 */
async function moveOutput(file: string, to: string, name: string): Promise<string> {
  const move = async (dest: string) => {
    try {
      await rename(file, dest);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EXDEV') throw e;
      await copyFile(file, dest);
      await rm(file, { force: true });
    }
    return dest;
  };
  try {
    return await move(to);
  } catch (e) {
    if (!['EISDIR', 'ENOTEMPTY', 'EEXIST'].includes((e as NodeJS.ErrnoException).code ?? '')) throw e;
    const dir = path.join(to, 'out');
    await mkdir(dir, { recursive: true });
    return move(path.join(dir, name));
  }
}

async function emptyDir(dir: string): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  await Promise.all(names.map((n) => rm(path.join(dir, n), { recursive: true, force: true })));
}

/** Builds an InputFile for a path on disk. */
export async function inputFile(p: string, name = path.basename(p)): Promise<InputFile> {
  const st = await regularFile(p);
  return { path: p, name, size: st.size };
}

/** Each input (an overlay, a mask too) whose frames or pages beyond the first the tool left out (ToolDef `frames`). */
async function firstFrameWarnings(
  tool: Tool,
  files: InputFile[],
  settings: Record<string, unknown>,
  result: ToolResult,
): Promise<string[]> {
  if (!tool.frames) return [];
  const frames = await import('./image/_shared/frames.js');
  const warnings: string[] = [];
  for (const f of files) {
    // Counted first: most inputs are one picture, and a JPEG's count needs no read at all.
    const n = await frames.frameCount(f);
    if (n > 1 && (tool.frames === 'first' || (await tool.frames(f, settings, result)))) warnings.push(frames.firstFrameOnly(f, n, tool.id));
  }
  return warnings;
}

/** A 16-bit PNG/TIFF input that came out at 8 bits is named in the warnings (image/_shared/depth.ts). */
async function warnDepthCut(id: string, inputs: ToolInputs['files'], output: OutputFile, ctx: RunContext): Promise<void> {
  const depth = await import('./image/_shared/depth.js');
  if (!depth.mayBeDeep(inputs)) return;
  const warning = await depth.depthCutWarning(id, inputs, output);
  if (warning) ctx.warn(warning);
}
