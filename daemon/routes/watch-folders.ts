/**
 * /api/v1/admin/watch-folders: folders on the server whose files the daemon processes with a pipeline,
 * as jobs of an owner (admins only). A saved pipeline must be one the owner may run (its own, or a team
 * pipeline of its team). Deleting one stops it at once: a file in progress has its job cancelled and stays in place.
 */
import type { FastifyInstance } from 'fastify';
import { KilnError } from '../../src/core/errors.js';
import { auditFrom } from '../accounts/audit.js';
import { requireUser } from '../auth/authenticate.js';
import { requirePermission } from '../auth/permissions.js';
import { PipelineStore } from '../library/pipelines.js';
import { createWatchFolder, deleteWatchFolder, getWatchFolder, listWatchFolders, watchFolderView } from '../watch/store.js';

export async function watchFolderRoutes(app: FastifyInstance): Promise<void> {
  const { store, watchFolders } = app.kiln;
  const pipelines = new PipelineStore(store.db, app.kiln.dataKey);
  const view = (row: Parameters<typeof watchFolderView>[0]) => ({ ...watchFolderView(row), status: watchFolders.status(row.id) });

  app.get('/api/v1/admin/watch-folders', async (request) => {
    requirePermission(request, 'settings:write');
    return { watchFolders: (await listWatchFolders(store.db)).map(view) };
  });

  app.get('/api/v1/admin/watch-folders/:id', async (request) => {
    requirePermission(request, 'settings:write');
    return view(await getWatchFolder(store.db, (request.params as { id: string }).id));
  });

  app.post('/api/v1/admin/watch-folders', async (request, reply) => {
    const user = requireUser(request);
    requirePermission(request, 'settings:write');
    const row = await createWatchFolder(
      store.db,
      user.id,
      request.body,
      async (id, ownerId) => {
        const saved = await pipelines.get(user, id);
        // The folder's jobs run as its owner: someone else's private pipeline is not theirs to run.
        if (!(await pipelines.usableBy(saved, ownerId)))
          throw new KilnError(
            'VALIDATION_ERROR',
            `pipelineId: the folder's owner ${ownerId} may not run pipeline ${saved.name}: it is neither theirs nor shared with their team (scope team).`,
            { details: [{ path: 'pipelineId', message: "not usable by the folder's owner" }] },
          );
        return pipelines.reveal(saved);
      },
      app.kiln.dataKey,
    );
    await auditFrom(request, 'watch-folder.create', row.id, { path: row.path, ownerId: row.owner_id });
    await watchFolders.sync();
    return reply.code(201).send(view(row));
  });

  app.delete('/api/v1/admin/watch-folders/:id', async (request, reply) => {
    requirePermission(request, 'settings:write');
    const { id } = request.params as { id: string };
    await deleteWatchFolder(store.db, id);
    await auditFrom(request, 'watch-folder.delete', id);
    await watchFolders.sync();
    return reply.code(204).send();
  });
}
