/**
 * Pipelines: an ordered list of steps (tool or preset id + settings), written by hand as plain JSON:
 *   {"name": "web-thumbs", "steps": [{"tool": "resize", "settings": {"width": 800}}, {"tool": "convert", "settings": {"format": "webp"}}]}
 * Every step is validated before any step runs — settings against the tool's schema, and the type each
 * step produces against what the next step accepts — and a failing step names itself in the error.
 */
import { rename } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { KilnError, toKilnError } from '../core/errors.js';
import { closestName } from '../core/settings.js';
import { contentTypeFor } from '../core/mime.js';
import { matchesAccept, type FileKind } from '../core/sniff.js';
import { defineTool, type InputFile, type Tool } from '../core/tool.js';
import { createWorkspace, type Workspace } from '../core/workspace.js';
import { requireEngine } from '../engines/registry.js';
import { findTool } from '../tools/index.js';
import { findPreset, presetTool } from '../tools/presets.js';
import { inputFile, runTool, validateRequest, type RunOutcome } from '../tools/run-tool.js';

const StepSchema = z.object({ tool: z.string().min(1), settings: z.record(z.string(), z.unknown()).default({}) }).strict();

/**
 * Strict at every level: a key it does not know (`step` for `steps`, `setings`) is refused, never dropped.
 * Saved definitions are stored as parsed, so none carries a key this refuses.
 */
export const PipelineSchema = z
  .object({
    name: z
      .string()
      .min(1)
      .max(100)
      .regex(/^[\w.-]+$/, 'letters, digits, dot, dash and underscore only')
      .optional(),
    description: z.string().max(1000).optional(),
    steps: z.array(StepSchema).min(1, 'a pipeline needs at least one step').max(20, 'a pipeline has at most 20 steps'),
  })
  .strict();
export type Pipeline = z.infer<typeof PipelineSchema>;

export interface ResolvedStep {
  index: number;
  tool: Tool;
  settings: Record<string, unknown>;
}

export function resolveToolOrPreset(id: string): Tool | undefined {
  const tool = findTool(id);
  if (tool) return tool;
  const preset = findPreset(id);
  const base = preset && findTool(preset.tool);
  return preset && base ? presetTool(preset, base) : undefined;
}

/** Tools whose output type is not their input's: what they produce, given their settings. */
const PRODUCES: Record<string, (s: Record<string, unknown>) => string> = {
  'image-to-pdf': () => 'pdf',
  'pdf-to-image': (s) => (String(s.pages ?? 'all') === 'all' || /[-,z]/.test(String(s.pages)) ? 'zip|' : '') + String(s.format ?? 'png'),
  'extract-audio': (s) => String(s.format ?? 'mp3'),
  'video-to-gif': () => 'gif',
  'video-to-webp': () => 'webp',
  'gif-to-video': (s) => String(s.format ?? 'mp4'),
  'images-to-video': () => 'mp4',
  'waveform-image': () => 'png',
  'extract-subtitles': () => 'srt',
  'ringtone-maker': () => 'm4a',
  'wordprocessor-to-pdf': () => 'pdf',
  'spreadsheet-to-pdf': () => 'pdf',
  'presentation-to-pdf': () => 'pdf',
  'html-to-pdf': () => 'pdf',
  'markdown-to-pdf': () => 'pdf',
  'markdown-to-docx': () => 'docx',
  'markdown-to-html': () => 'html',
  'to-epub': () => 'epub',
  'pdf-to-text': () => 'txt',
  'pdf-to-wordprocessor': () => 'docx',
  'html-to-image': (s) => String(s.format ?? 'png'),
  'qr-generate': () => 'png',
  'barcode-generate': () => 'png',
  'svg-to-raster': (s) => String(s.format ?? 'png'),
  vectorize: () => 'svg',
  'split-pdf': (s) => (s.mode === 'every' ? 'zip' : 'pdf'),
  // Always PNG, whatever the input's format (the transparency of the circle, a chart, restored faces).
  'circle-crop': () => 'png',
  'enhance-faces': () => 'png',
  histogram: () => 'png',
  collage: () => 'png',
  stitch: () => 'png',
  // Its `format` is a colour notation (hex, rgb), not a file type: JSON, or the PNG strip with swatch.
  'color-palette': (s) => (s.swatch ? 'png' : 'json'),
  // A JPEG photo; with a print sheet too, two files and so a ZIP (passport-photo → resize ran the whole
  // photo pipeline, then failed on the ZIP at step 2).
  'passport-photo': (s) => (s.printLayout && s.printLayout !== 'none' ? 'zip' : 'jpg'),
  // Every action writes a GIF (a WebP or APNG input too); extract-frames one frame image or a ZIP of them.
  'gif-tools': (s) =>
    s.action === 'extract-frames' ? (s.extractMode && s.extractMode !== 'single' ? 'zip' : String(s.extractFormat ?? 'png')) : 'gif',
};
const ZIP_TOOLS = new Set(['split', 'favicon', 'bulk-rename', 'video-to-frames', 'split-audio']);
const DATA_TOOLS = new Set(['info', 'find-duplicates', 'barcode-read', 'image-to-base64', 'pdf-metadata-read', 'ocr']);

function kindOf(ext: string): FileKind {
  const e = ext.toLowerCase().replace(/^\./, '');
  const mime = e === 'm4a' ? 'audio/mp4' : contentTypeFor(`x.${e}`).split(';')[0]!;
  return { ext: e === 'jpeg' ? 'jpg' : e, mime, text: false };
}

const FAMILY_KIND: Record<string, FileKind> = {
  image: { ext: '*', mime: 'image/x-any', text: false },
  video: { ext: '*', mime: 'video/x-any', text: false },
  audio: { ext: '*', mime: 'audio/x-any', text: false },
  pdf: kindOf('pdf'),
};

/** What a step produces, as far as it can be known before running (undefined = unknown, not checked). */
export function producedKind(tool: Tool, settings: Record<string, unknown>, input: FileKind | undefined): FileKind | undefined {
  // A preset makes what its base tool makes with the preset's settings (jpg-to-pdf: a PDF, not an image).
  if (tool.presetOf) return producedKind(tool.presetOf.base, { ...settings, ...tool.presetOf.fixed }, input);
  const baseId = tool.id;
  if (ZIP_TOOLS.has(baseId)) return kindOf('zip');
  if (DATA_TOOLS.has(baseId)) return kindOf('json');
  // The other of its two formats: a WebP becomes a GIF, a GIF an animated WebP (unknown input: some image).
  if (baseId === 'gif-webp' && input && input.ext !== '*') return kindOf(input.ext === 'webp' ? 'gif' : 'webp');
  const rule = PRODUCES[baseId];
  if (rule) {
    const r = rule(settings);
    return kindOf(r.startsWith('zip|') ? 'zip' : r);
  }
  if (typeof settings.format === 'string' && !['original', 'auto'].includes(settings.format)) return kindOf(settings.format);
  if (typeof settings.outputFormat === 'string') return kindOf(settings.outputFormat);
  if (tool.section === 'pdf') return FAMILY_KIND.pdf;
  if (input) return input;
  return FAMILY_KIND[tool.section];
}

/** A schema issue as problems with a path; each unknown key is one, naming the key and the one meant. */
function schemaProblems(i: z.core.$ZodIssue): { path: string; message: string }[] {
  if (i.code !== 'unrecognized_keys') return [{ path: i.path.join('.') || 'pipeline', message: i.message }];
  const known = Object.keys((i.path.length ? StepSchema : PipelineSchema).shape);
  return i.keys.map((key) => {
    const meant = closestName(key, known);
    return {
      path: [...i.path, key].join('.'),
      message: `unknown key ${JSON.stringify(key)}${meant ? ` (did you mean ${meant}?)` : ''}; ${i.path.length ? 'a step' : 'a pipeline'} has ${known.join(', ')}`,
    };
  });
}

/**
 * Validates the whole pipeline; throws one VALIDATION_ERROR that lists every problem, each naming its
 * step (a file with three mistakes is fixed in one round, not three).
 */
export function validatePipeline(raw: unknown): { pipeline: Pipeline; steps: ResolvedStep[] } {
  const parsed = PipelineSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.flatMap(schemaProblems);
    throw new KilnError('VALIDATION_ERROR', `Invalid pipeline: ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}.`, {
      details: problems,
    });
  }
  const pipeline = parsed.data;
  const steps: ResolvedStep[] = [];
  const problems: { path: string; message: string; code: KilnError['code'] }[] = [];
  const problem = (path: string, message: string, code: KilnError['code'] = 'VALIDATION_ERROR') => {
    problems.push({ path, message, code });
  };
  let kind: FileKind | undefined;
  pipeline.steps.forEach((step, index) => {
    const label = `step ${index + 1} (${step.tool})`;
    const tool = resolveToolOrPreset(step.tool);
    if (!tool) {
      // What comes next cannot be type-checked against an unknown step.
      kind = undefined;
      problem(`steps.${index}.tool`, `${label}: no tool or preset named ${step.tool}.`);
      return;
    }
    if (index > 0 && tool.input.kind === 'none')
      problem(`steps.${index}.tool`, `${label}: ${tool.id} takes no input file, so it can only be the first step.`);
    // A later step is handed the one file the step before made: a tool that needs several (merge-pdf)
    // would otherwise run on that one alone, since steps run with their counts taken as validated.
    if (index > 0 && tool.input.kind === 'files' && tool.input.min > 1)
      problem(
        `steps.${index}.tool`,
        `${label}: ${tool.id} needs at least ${tool.input.min} files, but a step after the first is given only the one file the step before it made; make it the first step.`,
      );
    if ((tool.input.extra ?? []).some((x) => x.required))
      problem(`steps.${index}.tool`, `${label}: ${tool.id} needs a second file, which a pipeline cannot give.`);
    let settings: Record<string, unknown> | undefined;
    try {
      settings = validateRequest(
        tool,
        {
          files:
            tool.input.kind === 'files' ? Array.from({ length: tool.input.min }, () => dummy) : tool.input.kind === 'none' ? [] : [dummy],
          extra: {},
        },
        step.settings,
      );
    } catch (e) {
      const err = toKilnError(e);
      problem(`steps.${index}.settings`, `${label}: ${err.message}`, err.code);
    }
    if (index > 0 && kind && !fits(kind, tool))
      problem(
        `steps.${index}`,
        `${label}: it takes ${tool.input.kind === 'none' ? 'no file' : tool.input.accept.join(', ')}, but step ${index} produces ${kind.ext === '*' ? kind.mime.split('/')[0] : kind.ext}.`,
      );
    kind = producedKind(tool, settings ?? step.settings, kind);
    if (settings) steps.push({ index, tool, settings });
  });
  if (problems.length === 1) {
    const [p] = problems;
    throw new KilnError(p!.code, p!.message, { details: [{ path: p!.path, message: p!.message }] });
  }
  if (problems.length)
    throw new KilnError(
      'VALIDATION_ERROR',
      `${problems.length} problems in the pipeline:\n${problems.map((p) => `  ${p.message}`).join('\n')}`,
      {
        details: problems.map(({ path, message }) => ({ path, message })),
      },
    );
  return { pipeline, steps };
}

const dummy: InputFile = { path: '', name: 'input', size: 0 };

function fits(kind: FileKind, tool: Tool): boolean {
  if (tool.input.kind === 'none') return false;
  if (kind.ext !== '*') return matchesAccept(kind, tool.input.accept);
  // A whole family (e.g. "some image"): fits when the tool takes that family or any member of it.
  const family = kind.mime.split('/')[0];
  return tool.input.accept.some(
    (a) => a.startsWith(`${family}/`) || (family === 'image' && /^\.(png|jpe?g|webp|gif|tiff?|avif|heic|heif|svg)$/.test(a)),
  );
}

export interface PipelineRunOptions {
  workDir: string;
  dataDir: string;
  /** Where the last step's output is moved. */
  outDir: string;
  signal?: AbortSignal;
  onProgress?: (percent: number, stage?: string) => void;
}

/**
 * Runs validated steps on the inputs; each step's output is the next step's input. The last output is
 * moved into `opts.outDir`, and no step's files outlive the run: a step's workspace goes once the next
 * step has read it (the daemon keeps a job's directory until its output expires, and every
 * intermediate file used to stay there with it).
 */
export async function runPipeline(steps: ResolvedStep[], files: InputFile[], opts: PipelineRunOptions): Promise<RunOutcome> {
  let current = files;
  let outcome: RunOutcome | undefined;
  // What each step left out (data.warnings), named by step: only the last step's data is the result's.
  const warnings: string[] = [];
  const originalSize = files.reduce((a, f) => a + f.size, 0);
  const workspaces: Workspace[] = [];
  try {
    for (const step of steps) {
      const label = `step ${step.index + 1}/${steps.length} (${step.tool.id})`;
      const ws = await createWorkspace(opts.workDir, `step${step.index + 1}-`);
      workspaces.push(ws);
      // The stage names the step and its own percent; the percent is the whole pipeline's.
      const report = (p: number, stage?: string) =>
        opts.onProgress?.(((step.index + p / 100) / steps.length) * 100, `${label} ${Math.round(p)}%${stage ? ': ' + stage : ''}`);
      report(0, 'starting');
      try {
        outcome = await runTool(step.tool, { files: current, extra: {} }, step.settings, {
          workDir: ws.dir,
          dataDir: opts.dataDir,
          signal: opts.signal,
          validated: true,
          onProgress: report,
        });
      } catch (e) {
        const err = toKilnError(e);
        throw new KilnError(err.code, `${label}: ${err.message}`, { details: err.details, reason: err.reason });
      }
      const said = outcome.data?.warnings;
      if (Array.isArray(said)) for (const w of said) if (typeof w === 'string') warnings.push(`${label}: ${w}`);
      if (!outcome.output) throw new KilnError('VALIDATION_ERROR', `${label} produced no file for the next step.`);
      // The previous step's files were this step's input; unless this step handed one back as its output.
      const previous = workspaces.at(-2);
      if (previous && !isInside(outcome.output.path, previous.dir)) await previous.dispose();
      current = [await inputFile(outcome.output.path, outcome.output.name)];
    }
    const output = outcome!.output!;
    const dest = path.join(opts.outDir, output.name);
    await rename(output.path, dest);
    const data = warnings.length ? { ...outcome!.data, warnings } : outcome!.data;
    return { ...outcome!, output: { ...output, path: dest }, originalSize, data };
  } finally {
    for (const ws of workspaces) await ws.dispose();
  }
}

/**
 * Every step's engines and feature bundles, before the first step runs: a missing bundle at step 2
 * was found only once step 1 had run (minutes of video work thrown away), and the job failed after
 * it was queued instead of being refused up front.
 */
export async function requireStepNeeds(steps: ResolvedStep[], dataDir: string): Promise<void> {
  for (const step of steps) {
    const { tool } = step;
    try {
      await Promise.all((tool.needs?.engines ?? []).map((e) => requireEngine(e)));
      if (tool.needs?.bundles?.length || tool.needs?.bundlesBySetting)
        await (await import('../tools/bundles.js')).requireRunBundles(dataDir, tool, step.settings);
    } catch (e) {
      const err = toKilnError(e);
      throw new KilnError(err.code, `step ${step.index + 1}/${steps.length} (${tool.id}): ${err.message}`, {
        details: err.details,
        reason: err.reason,
      });
    }
  }
}

function isInside(file: string, dir: string): boolean {
  const rel = path.relative(dir, file);
  return !rel.startsWith('..') && !path.isAbsolute(rel);
}

/**
 * A validated pipeline as a Tool: it takes what its first step takes and delivers what its last step
 * makes, so the CLI runner (batch, naming, --json) and the daemon's job runner run it like any tool.
 */
export function pipelineTool(steps: ResolvedStep[], name: string): Tool {
  const first = steps[0]!.tool;
  const last = steps[steps.length - 1]!.tool;
  const input = first.input.kind === 'none' ? first.input : { ...first.input, extra: [] };
  return defineTool({
    id: 'pipeline',
    section: first.section,
    group: first.group,
    summary: `Pipeline ${name}: ${steps.map((s) => s.tool.id).join(' → ')}`,
    input,
    settings: z.object({}),
    // The last step's own words: the CLI writes a "ZIP of …" as separate files, as for the tool.
    output: `the output of the last step: ${last.output}`,
    preflight: (_settings, ctx) => requireStepNeeds(steps, ctx.dataDir),
    async run(ctx, inputs) {
      const out = await runPipeline(steps, inputs.files, {
        workDir: ctx.workDir,
        dataDir: ctx.dataDir,
        outDir: ctx.outDir,
        signal: ctx.signal,
        onProgress: (p, s) => ctx.progress(p, s),
      });
      return { outputs: [out.output!], data: out.data };
    },
  });
}

/** A pipeline file's name without directories, for messages. */
export function pipelineLabel(p: Pipeline, file?: string): string {
  return p.name ?? (file ? path.basename(file, '.json') : 'pipeline');
}
