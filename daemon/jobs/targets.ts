/**
 * What a tool route runs: a catalog tool, or a preset (its base tool with some settings fixed and a
 * narrower accept list). Presets whose base tool is not in the catalog yet get no route.
 */
import { KilnError } from '../../src/core/errors.js';
import { matchesAccept, sniffFile, describeAccept } from '../../src/core/sniff.js';
import { isBatchable, type InputFile, type Section, type Tool } from '../../src/core/tool.js';
import { TOOLS, findTool } from '../../src/tools/index.js';
import { PRESETS, type Preset } from '../../src/tools/presets.js';

export interface Target {
  id: string;
  section: Section;
  tool: Tool;
  preset?: Preset;
  batchable: boolean;
}

function build(): Target[] {
  const out: Target[] = TOOLS.map((tool) => ({ id: tool.id, section: tool.section, tool, batchable: isBatchable(tool) }));
  const ids = new Set(out.map((t) => t.id));
  for (const preset of PRESETS) {
    const tool = findTool(preset.tool);
    if (!tool || ids.has(preset.id)) continue;
    out.push({ id: preset.id, section: preset.section, tool, preset, batchable: isBatchable(tool) });
  }
  return out;
}

let cache: Target[] | undefined;
let byId: Map<string, Target> | undefined;

export function targets(): Target[] {
  return (cache ??= build());
}

export function findTarget(id: string): Target | undefined {
  byId ??= new Map(targets().map((t) => [t.id, t]));
  return byId.get(id);
}

export function routeOf(t: Target): string {
  return `/api/v1/tools/${t.section}/${t.id}`;
}

/** The caller's settings with the preset's fixed ones on top. */
export function effectiveSettings(t: Target, raw: Record<string, unknown>): Record<string, unknown> {
  return t.preset ? { ...raw, ...t.preset.fixed } : raw;
}

/** A preset only takes its listed input types, checked from the bytes. */
export async function checkPresetInputs(t: Target, files: InputFile[]): Promise<void> {
  if (!t.preset) return;
  for (const f of files) {
    const kind = await sniffFile(f.path, f.name);
    if (!matchesAccept(kind, t.preset.accept)) {
      throw new KilnError(
        'UNSUPPORTED_INPUT',
        `${f.name} is ${kind.mime === 'application/octet-stream' ? 'not a recognised file type' : `a ${kind.ext} file`}; ${t.id} takes ${describeAccept(t.preset.accept)}.`,
        {
          details: { file: f.name, detected: kind.mime, accepted: t.preset.accept },
        },
      );
    }
  }
}
