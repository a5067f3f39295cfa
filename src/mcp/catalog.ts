/**
 * The MCP tool list, generated from the catalog: every tool and preset is an MCP tool of the same id,
 * its input schema the tool's settings schema (descriptions, defaults, enums, ranges) plus where its
 * files come from. Two transports use it: `kiln mcp` (local paths) and the daemon's /api/v1/mcp (library
 * file ids or URLs). No tool code here.
 */
import { settingsJsonSchema } from '../core/settings.js';
import type { Section, Tool } from '../core/tool.js';
import { PRESETS, presetTool } from '../tools/presets.js';
import { TOOLS } from '../tools/index.js';

/** How a call names its files: local paths (stdio) or library ids / URLs (daemon). */
export type FileRefs = 'paths' | 'library';

export interface McpEntry {
  tool: Tool;
  /** True for tools that only return data (info, barcode-read…): they write nothing. */
  dataOnly: boolean;
  /** Feature bundles the tool needs, for the availability note. */
  bundles: string[];
}

export interface EntryFilter {
  /** Tool ids must match this regular expression. */
  tools?: RegExp;
  sections?: Section[];
}

export function catalogEntries(filter: EntryFilter = {}): McpEntry[] {
  const base = new Map(TOOLS.map((t) => [t.id, t]));
  const all: Tool[] = [...TOOLS];
  for (const p of PRESETS) {
    const b = base.get(p.tool);
    if (b) all.push(presetTool(p, b));
  }
  return all
    .filter((t) => (!filter.sections || filter.sections.includes(t.section)) && (!filter.tools || filter.tools.test(t.id)))
    .map((tool) => ({ tool, dataOnly: /^JSON\b/.test(tool.output), bundles: tool.needs?.bundles ?? [] }));
}

type JsonSchema = Record<string, unknown>;

function fileRef(refs: FileRefs, what: string): JsonSchema {
  return refs === 'paths'
    ? { type: 'string', description: `${what}: a local file path (absolute, or relative to the server's working directory)` }
    : {
        type: 'string',
        description: `${what}: a library file id (from the file library) or an http(s) URL the server downloads (private addresses are refused)`,
      };
}

/** The MCP `inputSchema` of one entry: its settings plus `input`, its second files, and `output` (paths mode). */
export function inputSchema(entry: McpEntry, refs: FileRefs): JsonSchema {
  const settings = settingsJsonSchema(entry.tool) as { properties?: Record<string, JsonSchema>; required?: string[] };
  const properties: Record<string, JsonSchema> = { ...(settings.properties ?? {}) };
  const required = [...(settings.required ?? [])].filter((k) => properties[k]?.default === undefined);
  const spec = entry.tool.input;
  const accept = spec.kind === 'none' ? '' : ` (${spec.accept.join(', ')})`;
  if (spec.kind === 'file') {
    properties.input = fileRef(refs, `the input file${accept}`);
    required.unshift('input');
  } else if (spec.kind === 'files') {
    properties.input = {
      type: 'array',
      items: fileRef(refs, 'an input file'),
      minItems: spec.min,
      maxItems: spec.max,
      description: `the input files, in order${accept}`,
    };
    required.unshift('input');
  }
  for (const x of spec.extra ?? []) {
    // A second file whose field is `file` is the second positional input: give it a name of its own.
    const key = extraKey(x.field, x.flag);
    properties[key] = x.indexed
      ? { type: 'array', items: fileRef(refs, x.description), description: x.description }
      : fileRef(refs, x.description);
    if (x.required) required.push(key);
  }
  if (refs === 'paths' && !entry.dataOnly)
    properties.output = {
      type: 'string',
      description:
        "where to write the result: a file path (refused when a file is there), or a directory ending in / (created when missing). Default: next to the input, named by the CLI's rule (<name>-<tool>.<ext>). A file is never overwritten",
    };
  return { type: 'object', properties, ...(required.length ? { required: [...new Set(required)] } : {}), additionalProperties: false };
}

/** The argument name of a second file: its CLI flag (e.g. `second` for compare's second `file` part). */
export function extraKey(field: string, flag?: string): string {
  const name = flag ?? field;
  return name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

export interface Availability {
  available: boolean;
  missingBundles: string[];
}

/** One line for the client's tool picker, plus the state of an AI tool's bundles. */
export function describeEntry(entry: McpEntry, availability: Availability): string {
  const t = entry.tool;
  let text = `${t.summary} Output: ${t.output}.`;
  if (!availability.available)
    text += ` NOT INSTALLED: needs the feature bundle${availability.missingBundles.length > 1 ? 's' : ''} ${availability.missingBundles.join(', ')}; an admin installs ${availability.missingBundles.length > 1 ? 'them' : 'it'} with \`kiln features install ${t.id}\`.`;
  if (!availability.available && t.needs?.bundleFallback) text += ` Until then: ${t.needs.bundleFallback}`;
  return text;
}
