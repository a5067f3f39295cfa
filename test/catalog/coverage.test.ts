/**
 * The catalog against the spec's catalog.json, kept as test/fixtures/catalog.json so that the suite runs
 * in any clone (and checked against ../shared/spec/catalog.json beside the checkout when that exists):
 * every tool exists with its section, group and setting names, except those listed in NOT_BUILT; every
 * preset exists; every tool makes a CLI command and is run by some test. Fails when a tool is missing anywhere.
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

const CATALOG = path.join(REPO, 'test', 'fixtures', 'catalog.json');
const SPEC_CATALOG = path.join(REPO, '..', 'shared', 'spec', 'catalog.json');

/**
 * The catalog's tools that are not built yet: the AI-helper tools, which run on models installed as feature
 * bundles. Kept here as one visible list; the suite fails when one of them gets built and is still listed.
 */
const NOT_BUILT: string[] = [];

interface CatalogTool {
  id: string;
  section: string;
  group: string;
  ai: boolean;
  settings: { name: string }[];
}
interface Catalog {
  tools: CatalogTool[];
  presets: {
    id: string;
    section: string;
    baseTool: string;
    fixedSettings: Record<string, unknown>;
    accept: string[];
    outputExtension: string;
    optionalSettings: string[];
  }[];
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
    else if (/\.test\.tsx?$/.test(e.name)) text += readFileSync(p, 'utf8');
  }
  return text;
}

const reEscape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A real run of a tool in a test: the CLI (`kiln(['<id>'`), its HTTP route (`/api/v1/tools/<section>/<id>`),
 * or runTool / a run helper given the id (`runTool(getTool('<id>')`, `runMedia(dir, '<id>'`).
 */
function runsTool(sources: string, id: string, section: string): boolean {
  const q = `['"\`]${reEscape(id)}['"\`]`;
  return [
    new RegExp(`\\bkiln\\(\\[\\s*${q}`),
    new RegExp(`/api/v1/tools/${section}/${reEscape(id)}(?![\\w-])`),
    new RegExp(`\\brun\\w*\\(\\s*(?:\\w+,\\s*)?(?:(?:getTool|findTool)\\(\\s*)?${q}`),
  ].some((re) => re.test(sources));
}

describe('catalog coverage', () => {
  const catalog = JSON.parse(readFileSync(CATALOG, 'utf8')) as Catalog;
  const expected = catalog.tools.filter((t) => !NOT_BUILT.includes(t.id));

  it('keeps test/fixtures/catalog.json equal to the spec catalog beside the checkout', (t) => {
    if (!existsSync(SPEC_CATALOG)) return t.diagnostic(`no ${SPEC_CATALOG} to compare with: the fixture is the reference`);
    assert.deepEqual(JSON.parse(readFileSync(SPEC_CATALOG, 'utf8')), catalog, `copy ${SPEC_CATALOG} to ${CATALOG}`);
  });

  it('lists as not built only catalog tools that are really not built', () => {
    const ids = new Set(catalog.tools.map((t) => t.id));
    assert.deepEqual(
      NOT_BUILT.filter((id) => !ids.has(id)),
      [],
      'NOT_BUILT names tools the catalog does not have',
    );
    assert.deepEqual(
      NOT_BUILT.filter((id) => findTool(id)),
      [],
      'built now: remove them from NOT_BUILT',
    );
  });

  it('has every tool not in NOT_BUILT, with its section and group', () => {
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

  it('names real settings and optional bundles in needs.bundlesBySetting', () => {
    const problems: string[] = [];
    for (const t of TOOLS) {
      for (const [bundle, when] of Object.entries(t.needs?.bundlesBySetting ?? {})) {
        if (!t.needs?.optionalBundles?.includes(bundle)) problems.push(`${t.id}: ${bundle} is not in optionalBundles`);
        for (const setting of Object.keys(when)) if (!(setting in t.settings.shape)) problems.push(`${t.id}: no setting ${setting}`);
      }
    }
    assert.deepEqual(problems, []);
    assert.deepEqual(findTool('smart-crop')!.needs?.bundlesBySetting, { 'face-detection': { mode: ['face'] } });
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

  // PRESETS is built from families and ids (src/tools/presets/families.ts): every record must still be the catalog's, in its order.
  it('derives each preset exactly as the catalog lists it', () => {
    assert.deepEqual(
      PRESETS.map((p) => ({ ...p })),
      catalog.presets.map((c) => ({
        id: c.id,
        section: c.section,
        tool: c.baseTool,
        fixed: c.fixedSettings,
        accept: c.accept,
        outputExtension: c.outputExtension,
        optional: c.optionalSettings,
      })),
    );
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

  it('runs every tool in some test', () => {
    const sources = testSources(path.join(REPO, 'test'));
    const untested = TOOLS.filter((t) => !runsTool(sources, t.id, t.section)).map((t) => t.id);
    assert.deepEqual(untested, [], `tools no test runs (CLI, route or runTool): ${untested.join(', ')}`);
  });
});
