/**
 * The catalog against the spec's catalog.json (beside the checkout in ../shared/spec): every tool that
 * is not an AI-helper tool exists with its section, group and setting names; every preset exists; every
 * tool makes a CLI command and is exercised by some test. Fails when a tool is missing anywhere.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { buildToolCommand } from '../../src/cli/tool-command.js';
import { TOOLS, findTool } from '../../src/tools/index.js';
import { PRESETS, presetTool } from '../../src/tools/presets.js';
import { loadTool } from '../../src/tools/lazy.js';
import { REPO } from '../helpers/cli.js';

const CATALOG = path.join(REPO, '..', 'shared', 'spec', 'catalog.json');

interface CatalogTool {
  id: string;
  section: string;
  group: string;
  ai: boolean;
  settings: { name: string }[];
}
interface Catalog {
  tools: CatalogTool[];
  presets: { id: string; section: string; baseTool: string; fixedSettings: Record<string, unknown> }[];
}

const GROUP_IDS: Record<string, string> = {
  'ai-tools': 'ai',
  'watermark-overlay': 'watermark',
  'layout-composition': 'layout',
  'format-conversion': 'format',
};

function testSources(dir: string): string {
  let text = '';
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) text += testSources(p);
    else if (e.name.endsWith('.test.ts')) text += readFileSync(p, 'utf8');
  }
  return text;
}

describe('catalog coverage', { skip: existsSync(CATALOG) ? false : `no catalog at ${CATALOG}` }, () => {
  const catalog = existsSync(CATALOG) ? (JSON.parse(readFileSync(CATALOG, 'utf8')) as Catalog) : { tools: [], presets: [] };
  // The 19 AI-helper tools run on models installed as feature bundles; they are not part of these issues.
  const expected = catalog.tools.filter((t) => !t.ai);

  it('has every non-AI tool with its section and group', () => {
    const missing = expected.filter((t) => !findTool(t.id)).map((t) => t.id);
    assert.deepEqual(missing, [], `tools missing from src/tools: ${missing.join(', ')}`);
    for (const t of expected) {
      const tool = findTool(t.id)!;
      assert.equal(tool.section, t.section, `${t.id} section`);
      assert.equal(tool.group, GROUP_IDS[t.group] ?? t.group, `${t.id} group`);
    }
  });

  it('declares every setting the catalog names', () => {
    const problems: string[] = [];
    for (const t of expected) {
      const tool = findTool(t.id);
      if (!tool) continue;
      const shape = tool.settings.shape as Record<string, unknown>;
      for (const s of t.settings) if (!(s.name.split('.')[0]! in shape)) problems.push(`${t.id}.${s.name}`);
    }
    assert.deepEqual(problems, [], `settings missing: ${problems.join(', ')}`);
  });

  it('has exactly the 83 presets, each on an existing base tool', () => {
    assert.equal(PRESETS.length, 83);
    assert.deepEqual(PRESETS.map((p) => p.id).sort(), catalog.presets.map((p) => p.id).sort());
    for (const p of PRESETS) {
      const base = findTool(p.tool);
      assert.ok(base, `preset ${p.id}: base tool ${p.tool} missing`);
      const tool = presetTool(p, base);
      assert.equal(tool.id, p.id);
    }
  });

  it('makes a CLI command for every tool and preset', () => {
    for (const t of TOOLS) assert.doesNotThrow(() => buildToolCommand(t), t.id);
    for (const p of PRESETS) {
      const base = findTool(p.tool);
      if (base) assert.doesNotThrow(() => buildToolCommand(presetTool(p, base)), p.id);
    }
  });

  it('loads every tool on its own by id (the CLI fast path)', async () => {
    for (const t of TOOLS)
      assert.equal(
        await loadTool(t.id),
        t,
        `${t.id}: its module file must be named ${t.id}.ts and listed in src/tools/${t.section}/list.ts`,
      );
    assert.equal(await loadTool('jpg-to-png'), undefined);
  });

  it('exercises every tool in some test', () => {
    const sources = testSources(path.join(REPO, 'test'));
    const untested = TOOLS.filter((t) => !sources.includes(`'${t.id}'`) && !sources.includes(`"${t.id}"`)).map((t) => t.id);
    assert.deepEqual(untested, [], `tools no test names: ${untested.join(', ')}`);
  });
});
