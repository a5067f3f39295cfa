/**
 * What a tool route runs: a catalog tool, or a preset as the tool presetTool() makes of it (its own
 * schema without the fixed settings, its own accept list), exactly as the CLI runs it. Presets whose
 * base tool is not in the catalog yet get no route.
 */
import { isBatchable, type Section, type Tool } from '../../src/core/tool.js';
import { TOOLS, findTool } from '../../src/tools/index.js';
import { PRESETS, presetTool } from '../../src/tools/presets.js';

export interface Target {
  /** The route's id: the tool's, or `pipeline:<name>` for a pipeline built for one request. */
  id: string;
  section: Section;
  tool: Tool;
  batchable: boolean;
}

function build(): Target[] {
  const out: Tool[] = [...TOOLS];
  const ids = new Set(out.map((t) => t.id));
  for (const preset of PRESETS) {
    const base = findTool(preset.tool);
    if (base && !ids.has(preset.id)) out.push(presetTool(preset, base));
  }
  return out.map((tool) => ({ id: tool.id, section: tool.section, tool, batchable: isBatchable(tool) }));
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

/** The catalog tool a target runs, for job records: a preset's base tool, otherwise its own. */
export function baseToolId(t: Target): string {
  return t.tool.presetOf?.base.id ?? t.tool.id;
}
