/** GET /api/v1/tools: the catalog as JSON (tools and presets with their routes and settings). */
import type { FastifyInstance } from 'fastify';
import { GROUP_TITLES, SECTIONS } from '../../src/core/tool.js';
import { describeSettings } from '../../src/core/settings.js';
import { missingBundles, missingToolFiles } from '../../src/ai/features.js';
import { findTool } from '../../src/tools/index.js';
import { routeOf, targets } from '../jobs/targets.js';
import { errorResponses, json } from '../openapi/common.js';
import type { RouteDoc } from '../openapi/route-doc.js';

export function catalogJson() {
  const all = targets();
  return {
    tools: all
      .filter((t) => !t.tool.presetOf)
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
    presets: all.flatMap((t) => {
      const p = t.tool.presetOf;
      if (!p || t.tool.input.kind === 'none') return [];
      return [
        {
          id: t.id,
          section: t.section,
          tool: p.base.id,
          fixed: p.fixed,
          accept: t.tool.input.accept,
          outputExtension: p.outputExtension,
          optional: p.optional,
          route: routeOf(t),
          batchRoute: t.batchable ? routeOf(t) + '/batch' : null,
        },
      ];
    }),
  };
}

/**
 * The catalog with, per tool, whether it runs on this server now: AI tools exist before their
 * bundles are installed and say which bundles they lack (the rest of the answer never changes).
 */
export async function catalogRoutes(app: FastifyInstance): Promise<void> {
  let catalog: ReturnType<typeof catalogJson> | undefined;
  app.get('/api/v1/tools', { schema: LIST_TOOLS_DOC }, async (_request, reply) => {
    catalog ??= catalogJson();
    const dataDir = app.kiln.config.dataDir;
    const tools = [];
    for (const t of catalog.tools) {
      const needed = findTool(t.id)?.needs?.bundles ?? [];
      const missing = needed.length ? await missingBundles(dataDir, needed) : [];
      // Import-only files the tool needs (e.g. GFPGAN for enhance-faces): not available until imported.
      const files = needed.length ? await missingToolFiles(dataDir, t.id, needed) : [];
      tools.push({
        ...t,
        available: missing.length === 0 && files.length === 0,
        missingBundles: missing,
        ...(files.length && { missingFiles: files }),
      });
    }
    return reply.type('application/json; charset=utf-8').send(JSON.stringify({ ...catalog, tools }));
  });
}

type Json = Record<string, unknown>;

/** What GET /api/v1/tools answers (catalogJson). */
function catalogSchema(): Json {
  const route = { type: 'string' };
  const batchRoute = { type: ['string', 'null'] };
  return {
    type: 'object',
    required: ['tools', 'presets'],
    properties: {
      tools: {
        type: 'array',
        items: {
          type: 'object',
          required: ['id', 'section', 'group', 'summary', 'route', 'batchRoute', 'input', 'output', 'execution', 'settings'],
          properties: {
            id: { type: 'string' },
            section: { type: 'string', enum: [...SECTIONS] },
            group: { type: 'string' },
            groupTitle: { type: 'string' },
            summary: { type: 'string' },
            description: { type: 'string' },
            route,
            batchRoute,
            input: { type: 'object', description: 'kind (file, files, none), accepted types, counts and extra inputs.' },
            output: { type: 'string' },
            execution: { type: 'string' },
            settings: { type: 'array', items: { type: 'object' }, description: 'Each setting with its name, type, range and default.' },
            available: { type: 'boolean', description: 'false: the tool needs feature bundles that are not installed on this server.' },
            missingBundles: {
              type: 'array',
              items: { type: 'string' },
              description: 'The bundles it lacks (install: POST /api/v1/admin/tools/{id}/features/install).',
            },
          },
        },
      },
      presets: {
        type: 'array',
        items: {
          type: 'object',
          required: ['id', 'section', 'tool', 'fixed', 'accept', 'outputExtension', 'route', 'batchRoute'],
          properties: {
            id: { type: 'string' },
            section: { type: 'string', enum: [...SECTIONS] },
            tool: { type: 'string' },
            fixed: { type: 'object' },
            accept: { type: 'array', items: { type: 'string' } },
            outputExtension: { type: 'string' },
            optional: {},
            route,
            batchRoute,
          },
        },
      },
    },
  };
}

const LIST_TOOLS_DOC: RouteDoc = {
  operationId: 'listTools',
  tags: ['catalog'],
  summary: 'The catalog: tools and presets with routes and settings.',
  response: { '200': json(catalogSchema()), ...errorResponses([401]) },
};
