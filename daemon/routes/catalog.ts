/** GET /api/v1/tools: the catalog as JSON (tools and presets with their routes and settings). */
import type { FastifyInstance } from 'fastify';
import { GROUP_TITLES } from '../../src/core/tool.js';
import { describeSettings } from '../../src/core/settings.js';
import { routeOf, targets } from '../jobs/targets.js';

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

export async function catalogRoutes(app: FastifyInstance): Promise<void> {
  let body: string | undefined;
  app.get('/api/v1/tools', async (_request, reply) =>
    reply.type('application/json; charset=utf-8').send((body ??= JSON.stringify(catalogJson()))),
  );
}
