/** What the interactive mode offers: every tool and every preset whose base tool is built. */
import type { Tool } from '../../core/tool.js';
import { findTool, TOOLS } from '../../tools/index.js';
import { PRESETS, presetTool } from '../../tools/presets.js';

export interface Choice {
  name: string;
  tool: Tool;
  summary: string;
  preset: boolean;
}

export function choices(): Choice[] {
  const out: Choice[] = TOOLS.map((t) => ({ name: t.id, tool: t, summary: t.summary, preset: false }));
  for (const p of PRESETS) {
    const base = findTool(p.tool);
    if (base) {
      const tool = presetTool(p, base);
      out.push({ name: p.id, tool, summary: tool.summary, preset: true });
    }
  }
  return out;
}

/** Every word of the query must appear in the id or the summary; id matches rank first. */
export function search(list: Choice[], query: string): Choice[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return list;
  const hits = list.filter((c) => words.every((w) => c.name.includes(w) || c.summary.toLowerCase().includes(w)));
  const score = (c: Choice) => (c.name.startsWith(words[0]!) ? 0 : c.name.includes(words[0]!) ? 1 : 2) + (c.preset ? 0.5 : 0);
  return hits.sort((a, b) => score(a) - score(b) || a.name.localeCompare(b.name));
}
