/** GET /api/v1/tools: the catalog as JSON (tools and presets with their routes and settings). */
import type { FastifyInstance } from 'fastify';
import { GROUP_TITLES } from '../../src/core/tool.js';
import { describeSettings } from '../../src/core/settings.js';
import { missingBundles, missingToolFiles } from '../../src/ai/features.js';
import { findTool } from '../../src/tools/index.js';
import { routeOf, targets } from '../jobs/targets.js';

export function catalogJson() {
  const all = targets();
  return {
    tools: all
      .filter((t) => !t.preset)
      .map((t) => ({
        id: t.id,
        section: t.section,
        group: t.tool.group,
        groupTitle: GROUP_TITLES[t.tool.group],
        summary: t.tool.summary,
        description: t.tool.description,
        route: routeOf(t),
        batchRoute: t.batchable ? routeOf(t) + '/batch' : null,
        input: t.tool.input,
        output: t.tool.output,
        execution: t.tool.execution ?? 'fast',
        settings: describeSettings(t.tool),
      })),
    presets: all
      .filter((t) => t.preset)
      .map((t) => ({
        id: t.id,
        section: t.section,
        tool: t.tool.id,
        fixed: t.preset!.fixed,
        accept: t.preset!.accept,
        outputExtension: t.preset!.outputExtension,
        optional: t.preset!.optional,
        route: routeOf(t),
        batchRoute: t.batchable ? routeOf(t) + '/batch' : null,
      })),
  };
}

/**
 * The catalog with, per tool, whether it runs on this server now: AI tools exist before their
 * bundles are installed and say which bundles they lack (the rest of the answer never changes).
 */
export async function catalogRoutes(app: FastifyInstance): Promise<void> {
  let catalog: ReturnType<typeof catalogJson> | undefined;
  app.get('/api/v1/tools', async (_request, reply) => {
    catalog ??= catalogJson();
    const dataDir = app.kiln.config.dataDir;
    const tools = [];
    for (const t of catalog.tools) {
      const needed = findTool(t.id)?.needs?.bundles ?? [];
      const missing = needed.length ? await missingBundles(dataDir, needed) : [];
      // Import-only files the tool needs (e.g. GFPGAN for enhance-faces): not available until imported.
      const files = needed.length ? await missingToolFiles(dataDir, t.id, needed) : [];
      tools.push({ ...t, available: missing.length === 0 && files.length === 0, missingBundles: missing, ...(files.length && { missingFiles: files }) });
    }
    return reply.type('application/json; charset=utf-8').send(JSON.stringify({ ...catalog, tools }));
  });
}
