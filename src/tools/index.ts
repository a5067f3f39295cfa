/**
 * The catalog: every tool, from the per-section lists. Adding a tool = its file plus one line in
 * `src/tools/<section>/list.ts`.
 */
import { KilnError } from '../core/errors.js';
import { SECTIONS, type Section, type Tool } from '../core/tool.js';
import * as audio from './audio/list.js';
import * as files from './files/list.js';
import * as image from './image/list.js';
import * as pdf from './pdf/list.js';
import * as video from './video/list.js';

const bySection: Record<Section, Record<string, unknown>> = { image, video, audio, pdf, files };

function collect(): Tool[] {
  const all: Tool[] = [];
  for (const section of SECTIONS) {
    for (const t of Object.values(bySection[section]) as Tool[]) {
      if (t?.kind !== 'tool') continue;
      if (t.section !== section) throw new Error(`tool ${t.id} is listed under ${section} but declares section ${t.section}`);
      all.push(t);
    }
  }
  all.sort((a, b) => SECTIONS.indexOf(a.section) - SECTIONS.indexOf(b.section) || a.id.localeCompare(b.id));
  const seen = new Set<string>();
  for (const t of all) {
    if (seen.has(t.id)) throw new Error(`duplicate tool id ${t.id}`);
    seen.add(t.id);
  }
  return all;
}

export const TOOLS: readonly Tool[] = collect();
const byId = new Map(TOOLS.map((t) => [t.id, t]));

export function findTool(id: string): Tool | undefined {
  return byId.get(id);
}

export function getTool(id: string): Tool {
  const t = byId.get(id);
  if (!t) throw new KilnError('NOT_FOUND', `No tool named ${id}. \`kiln tools\` lists them.`);
  return t;
}
