/**
 * Loads one tool by id without importing the whole catalog. `kiln resize …` is often called thousands of
 * times by scripts; importing all ~150 tool modules (and zod schemas) costs most of a CLI start. A tool's
 * module file is named after its id (docs/DEVELOPING.md), and each section's list.ts names its files, so
 * the list text is enough to find the one module to import.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SECTIONS, type Tool } from '../core/tool.js';

const listUrl = (section: string) => new URL(`./${section}/list.js`, import.meta.url);

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export async function loadTool(id: string): Promise<Tool | undefined> {
  if (!/^[a-z0-9]+(-[a-z0-9]+)*$/.test(id)) return undefined;
  const pattern = new RegExp(`from '(\\./(?:[\\w-]+/)*${escapeRegExp(id)}\\.js)'`);
  for (const section of SECTIONS) {
    let text: string;
    try {
      text = readFileSync(fileURLToPath(listUrl(section)), 'utf8');
    } catch {
      continue;
    }
    const m = pattern.exec(text);
    if (!m) continue;
    const mod = (await import(new URL(m[1]!, listUrl(section)).href)) as { default?: Tool };
    if (mod.default?.kind === 'tool' && mod.default.id === id) return mod.default;
  }
  // Not a tool (maybe a preset or a command). test/catalog/coverage.test.ts checks every tool loads here.
  return undefined;
}

/** Every tool id, read from the sections' list texts (no tool module is imported): for suggestions. */
export function toolIds(): string[] {
  const ids: string[] = [];
  for (const section of SECTIONS) {
    try {
      const text = readFileSync(fileURLToPath(listUrl(section)), 'utf8');
      for (const m of text.matchAll(/from '\.\/(?:[\w-]+\/)*([a-z0-9-]+)\.js'/g)) ids.push(m[1]!);
    } catch {
      // A section without a list (a partial build) has no tools to suggest.
    }
  }
  return ids;
}
