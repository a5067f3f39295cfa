/**
 * The conversion presets (catalog.json `presets`, listed by family in presets/families.ts). A preset is a
 * route and a CLI subcommand that runs its base tool with some settings fixed (usually the output format) and only the listed input types.
 * Other settings of the base tool are still accepted; the fixed ones are not (they are not in its schema).
 */
import type { Section, Tool } from '../core/tool.js';
import { PRESET_FAMILIES, SOURCE_EXTENSIONS } from './presets/families.js';

export interface Preset {
  id: string;
  section: Section;
  /** Base tool id. */
  tool: string;
  fixed: Record<string, unknown>;
  /** Input extensions the preset takes (checked from the bytes). */
  accept: string[];
  outputExtension: string;
  /** The settings the catalog lists as meaningful for this preset (docs, completions). */
  optional: string[];
}

/** Every preset, from its family and its id (`<from>-to-<to>`). */
export const PRESETS: readonly Preset[] = PRESET_FAMILIES.flatMap((f) =>
  f.ids.map((id): Preset => {
    const m = /^(.+)-to-(.+)$/.exec(id);
    if (!m) throw new Error(`preset id ${id} is not <from>-to-<to>`);
    const [, from, to] = m as unknown as [string, string, string];
    return {
      id,
      section: f.section,
      tool: f.tool,
      fixed: f.format ? { format: f.format(to) } : {},
      accept: SOURCE_EXTENSIONS[from] ?? [`.${from}`],
      outputExtension: `.${to}`,
      optional: [...f.optional],
    };
  }),
);

const byId = new Map(PRESETS.map((p) => [p.id, p]));

export function findPreset(id: string): Preset | undefined {
  return byId.get(id);
}

/**
 * A preset as a Tool of its own: the base tool with the preset's input types, its fixed settings removed
 * from the schema (they cannot be overridden) and merged back in before the base tool runs. The CLI, the
 * routes, batch and OpenAPI then treat presets exactly like tools.
 */
export function presetTool(preset: Preset, base: Tool): Tool {
  const fixedKeys = Object.keys(preset.fixed).filter((k) => k in base.settings.shape);
  const mask = Object.fromEntries(fixedKeys.map((k) => [k, true as const]));
  const settings = base.settings.omit(mask);
  /** The preset's settings with its fixed ones, as the base tool reads them. */
  const full = (s: Record<string, unknown>) => ({ ...base.settings.parse({ ...s, ...preset.fixed }) });
  const frames = base.frames;
  if (base.input.kind === 'none') throw new Error(`preset ${preset.id}: base ${base.id} takes no file`);
  return {
    ...base,
    id: preset.id,
    section: preset.section,
    summary: `Convert ${preset.accept.join('/')} to ${preset.outputExtension} (preset of ${base.id}).`,
    description: `Runs ${base.id} with ${JSON.stringify(preset.fixed)}; takes ${preset.accept.join(', ')}.`,
    input: { ...base.input, accept: preset.accept },
    output: outputOf(preset, base),
    settings,
    check: base.check ? (s) => base.check!({ ...s, ...preset.fixed }) : undefined,
    examples: [`input${preset.accept[0]} -o output${preset.outputExtension}`],
    run: (ctx, inputs, s) => base.run(ctx, inputs, full(s)),
    // The base tool decides with the fixed settings too (convert keeps an animation only into gif or webp).
    frames: typeof frames === 'function' ? (f, s, r) => frames(f, full(s), r) : frames,
    presetOf: { base, fixed: preset.fixed, outputExtension: preset.outputExtension, optional: preset.optional },
  };
}

/** What the preset makes, not what its base tool may make: `PDF` for jpg-to-pdf, never "image". */
function outputOf(preset: Preset, base: Tool): string {
  const kind = preset.outputExtension.slice(1).toUpperCase();
  // pdf-to-image and the like deliver several outputs as one ZIP.
  return /\bZIP\b/.test(base.output) ? `${kind}, or a ZIP of ${kind} files when there are several` : kind;
}
