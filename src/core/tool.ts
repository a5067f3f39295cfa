/**
 * The Tool type and defineTool(). A tool is declared once; CLI subcommands, HTTP routes, settings
 * validation, OpenAPI, completions and the man page are all generated from the declaration.
 */
import type { z } from 'zod';

export const SECTIONS = ['image', 'video', 'audio', 'pdf', 'files'] as const;
export type Section = (typeof SECTIONS)[number];

export const GROUPS = [
  'essentials',
  'optimization',
  'adjustments',
  'ai',
  'watermark',
  'utilities',
  'layout',
  'format',
  'video',
  'audio',
  'document',
] as const;
export type Group = (typeof GROUPS)[number];

/** The catalog's human names of the groups (catalog.json `groups`). */
export const GROUP_TITLES: Record<Group, string> = {
  essentials: 'essentials',
  optimization: 'optimization',
  adjustments: 'adjustments',
  ai: 'AI tools',
  watermark: 'watermark and overlay',
  utilities: 'utilities',
  layout: 'layout and composition',
  format: 'format and conversion',
  video: 'video',
  audio: 'audio',
  document: 'document',
};

/**
 * Accept tokens: a family (`image/*`, `video/*`, `audio/*`, `subtitle/*`), a MIME type, or an extension
 * (`.pdf`). Checked against the bytes of the file (see sniff.ts), never only against its name.
 */
export type AcceptToken = string;

/** A further file next to the main input: a watermark, an overlay, a mask, subtitles, sig0/sig1… */
export interface ExtraInput {
  /** Multipart field name. `file` means "the next `file` part after the main one" (order matters). */
  field: string;
  /** CLI flag name (kebab-case) for this file; defaults to `field`. */
  flag?: string;
  accept: AcceptToken[];
  required: boolean;
  /** Several files: multipart fields `<field>0`, `<field>1`, … (e.g. sig0, sig1). */
  indexed?: boolean;
  /** Indexed fields: how many (indices 0 … max-1); default 100. */
  max?: number;
  description: string;
}

export type InputSpec =
  /**
   * One file in the form field `file`. `inMemory`: run() reads the file only through openInput
   * (src/tools/image/_shared/decode.ts), so an upload the daemon kept in memory is handed over as is
   * (InputFile.bytes); for any other tool runTool writes such an input to its path first.
   */
  | { kind: 'file'; accept: AcceptToken[]; extra?: ExtraInput[]; inMemory?: boolean }
  /** Several files, repeated form field `file` (catalog D12). */
  | { kind: 'files'; accept: AcceptToken[]; min: number; max: number; extra?: ExtraInput[] }
  /** No upload: the settings are the JSON body (barcode-generate, html-to-image). Optional files may still come in `extra`. */
  | { kind: 'none'; extra?: ExtraInput[] };

/** Whether the tool takes an upload held in memory as it is (InputSpec `inMemory`). */
export function readsInputInMemory(tool: { input: InputSpec }): boolean {
  return tool.input.kind === 'file' && tool.input.inMemory === true;
}

export interface InputFile {
  /**
   * Absolute path on disk (inside the run's workspace or the user's file for the CLI). With `bytes`,
   * where the file goes if something needs it on disk (onDisk(), src/core/input-bytes.ts); until then
   * nothing is there.
   */
  path: string;
  /** The content, when the daemon kept a small upload in memory (daemon/http/memory-inputs.ts). */
  bytes?: Buffer;
  /** The original file name as the user gave it (used to name outputs). */
  name: string;
  size: number;
  /** Detected from the bytes; set by runTool before run() is called. */
  type?: { ext: string; mime: string };
}

export interface ToolInputs {
  files: InputFile[];
  /** Extra files keyed by ExtraInput.field (indexed ones in order). */
  extra: Record<string, InputFile[]>;
}

export interface OutputFile {
  path: string;
  /** File name offered to the user (download name, CLI output name). */
  name: string;
  contentType: string;
}

export interface ToolResult {
  /** Zero or more files. runTool packs several into one ZIP. */
  outputs: OutputFile[];
  /** JSON data for the caller (info, stats, counts). Returned in the HTTP result and printed by the CLI. */
  data?: Record<string, unknown>;
}

export interface RunContext {
  /** A private directory for this run; removed by the caller afterwards. */
  workDir: string;
  /** Directory where outputs must be written. */
  outDir: string;
  signal: AbortSignal;
  /** percent 0-100; stage is a short word ("encoding", "page 3/10"). */
  progress(percent: number, stage?: string): void;
  /**
   * Tells the caller what the run left out or assumed (the frames of an animation a still-only tool
   * dropped): runTool adds it to the result's `data.warnings` (src/core/warnings.ts).
   */
  warn(message: string): void;
  /**
   * Path for an output file in outDir, named after the first input: `out('png')` for photo.jpg gives
   * `photo.png`; `out('png', '-page1')` gives `photo-page1.png`; `out('zip', '', 'frames')` names it outright.
   */
  out(ext: string, suffix?: string, baseName?: string): string;
  /** Data directory of kiln (fonts cache, models, bundles). */
  dataDir: string;
}

export interface ToolNeeds {
  /** Engine ids from src/engines/registry.ts; checked before the run (ENGINE_MISSING). */
  engines?: string[];
  /** Feature bundles that must be installed (FEATURE_NOT_INSTALLED). */
  bundles?: string[];
  /** Bundles that add an optional feature; the tool still runs without them. */
  optionalBundles?: string[];
  /**
   * Which setting values need which of the optional bundles: `{ 'face-detection': { mode: ['face'] } }`
   * says smart-crop's face mode needs face detection and its other modes do not. runTool refuses such a
   * run (FEATURE_NOT_INSTALLED, naming the setting) before any work; each bundle named here is also in
   * `optionalBundles`, so installing the tool's features installs it.
   */
  bundlesBySetting?: Record<string, Record<string, readonly unknown[]>>;
  /**
   * The tool has a weaker fallback for some requests when `bundles` are missing (transcription:
   * pocketsphinx for English). runTool then leaves the bundle check to the tool, which throws
   * FEATURE_NOT_INSTALLED itself where the fallback cannot serve and names the engine that ran in
   * its result. The text says what the fallback is (docs, --help).
   */
  bundleFallback?: string;
}

// The settings schema may carry refinements, so it is any zod type whose input is an object.
// biome-ignore lint/suspicious/noExplicitAny: any object shape; the tool's own schema types its settings
export type SettingsSchema = z.ZodObject<any>;

export interface ToolDef<S extends SettingsSchema> {
  id: string;
  section: Section;
  group: Group;
  summary: string;
  /** Longer text for --help, the man page and llms-full.txt. */
  description?: string;
  input: InputSpec;
  settings: S;
  /**
   * Cross-field rules (e.g. "one of width, height or percentage"). Throw KilnError('VALIDATION_ERROR')
   * or return a message. Kept apart from the schema so the schema stays a plain object for flags and OpenAPI.
   */
  check?: (settings: z.output<S>) => string | void;
  /**
   * Settings that belong to one mode imply it: `{ targetSizeKb: { mode: 'targetSize' } }` sets the mode
   * when only targetSizeKb is given, and refuses a request that names another mode (parseSettings).
   */
  implies?: Record<string, Record<string, string>>;
  needs?: ToolNeeds;
  /**
   * Refusals that need the uploaded file or the installed state but no work (a page count, a runtime
   * that is not installed): run by the daemon before a job is queued, and by runTool before run().
   */
  preflight?: (settings: z.output<S>, ctx: { dataDir: string; inputs: ToolInputs }) => Promise<void>;
  /**
   * The tool makes one picture of an input that holds several (animated GIF/WebP/APNG, multi-page
   * TIFF): runTool then names, in data.warnings, each input (main or extra) whose other frames or
   * pages it left out. 'first': every run uses the first only. A function says whether this run did for `file`
   * (false where it kept them all: resize of an animation, a PDF page per TIFF page); it sees the
   * settings and what run() returned.
   */
  frames?: 'first' | ((file: InputFile, settings: z.output<S>, result: ToolResult) => boolean | Promise<boolean>);
  /**
   * The image it writes is made from the input, not the input edited (a histogram chart, a placeholder,
   * a palette strip, a difference map): runTool then does not warn that a 16-bit input came out at 8 bits.
   */
  derivedOutput?: boolean;
  /** 'long' tools usually end as 202 jobs. */
  execution?: 'fast' | 'long';
  /** Registered in the batch route (default: tools with one file input). */
  batch?: boolean;
  /** Describes the output for docs: e.g. 'image (same format as input)', 'JSON', 'ZIP of PNG tiles'. */
  output: string;
  /** Examples for --help and the man page (CLI argument strings after `kiln <id>`). */
  examples?: string[];
  run(ctx: RunContext, inputs: ToolInputs, settings: z.output<S>): Promise<ToolResult>;
  /** Set on a preset (tools/presets.ts presetTool()): the catalog tool it runs and what it fixes. */
  presetOf?: PresetOrigin;
}

export interface PresetOrigin {
  base: Tool;
  /** Settings the preset sets; they are not in its schema, so a caller cannot send them. */
  fixed: Record<string, unknown>;
  /** Extension of the file it produces (a ZIP of them when the base tool makes several). */
  outputExtension: string;
  /** The settings the catalog lists as meaningful for this preset (docs, completions). */
  optional: string[];
}

export interface Tool<S extends SettingsSchema = SettingsSchema> extends ToolDef<S> {
  kind: 'tool';
}

export function defineTool<S extends SettingsSchema>(def: ToolDef<S>): Tool<S> {
  if (!/^[a-z0-9]+(-[a-z0-9]+)*$/.test(def.id)) throw new Error(`bad tool id ${def.id}`);
  return { ...def, kind: 'tool' };
}

/** True when the batch route serves this tool. */
export function isBatchable(tool: Tool): boolean {
  return tool.batch ?? (tool.input.kind === 'file' && !(tool.input.extra ?? []).some((x) => x.required));
}
