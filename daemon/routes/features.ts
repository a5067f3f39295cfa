/**
 * Feature bundles, for admins: list with states, install what a tool needs (queued, one at a time,
 * surviving a restart), remove, and install an uploaded archive on an air-gapped server. Installs and
 * removals are written to the audit log.
 */
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { FastifyInstance } from 'fastify';
import { featureStatus, listFeatures } from '../../src/ai/features.js';
import { findBundle } from '../../src/ai/bundles/list.js';
import { installGeneration, removeGenerations } from '../../src/ai/ocr/generations.js';
import { startOcrInstall } from '../../src/ai/ocr/status.js';
import { KilnError } from '../../src/core/errors.js';
import { findTool } from '../../src/tools/index.js';
import { auditFrom } from '../accounts/audit.js';
import { requirePermission } from '../auth/permissions.js';

export async function featureRoutes(app: FastifyInstance): Promise<void> {
  const { config, features } = app.kiln;
  /** Largest archive an admin may upload: FEATURE_IMPORT_MAX_MB (default 8 GiB), checked at start (daemon/config.ts). */
  const importLimitBytes = () => Math.floor(config.featureImportMaxMb * 1048576);
  const dataDir = config.dataDir;

  /** At most 3 s: a bucket that does not answer must not hold up the list (the sync goes on behind). */
  const syncShared = () => Promise.race([features.syncFromArchives(), new Promise((r) => setTimeout(r, 3000).unref())]);

  app.get('/api/v1/admin/features', async (request) => {
    requirePermission(request, 'features:manage');
    // Scaled with S3: a bundle another instance keeps in the bucket and this one lacks is queued here
    // (installed from the bucket), so the list shows it queued or installing rather than missing.
    await syncShared();
    return { features: await listFeatures(dataDir, features) };
  });

  app.get('/api/v1/admin/features/:bundle', async (request) => {
    requirePermission(request, 'features:manage');
    await syncShared();
    return featureStatus(dataDir, (request.params as { bundle: string }).bundle, features);
  });

  const install = async (bundles: string[], request: Parameters<typeof auditFrom>[0], target: string) => {
    const by = request.user?.id;
    const r = await features.enqueue(bundles, by);
    if (r.queued.length) await auditFrom(request, 'feature.install', target, { queued: r.queued, installed: r.installed });
    return { ...r, features: await Promise.all(bundles.map((b) => featureStatus(dataDir, b, features))) };
  };

  /** The OCR runtime: a signed generation installed in the background, in turn with bundle installs. */
  const installOcr = async (request: Parameters<typeof auditFrom>[0]) => {
    const started = startOcrInstall(
      dataDir,
      {},
      (fn) => features.exclusive(fn),
      (e) => {
        void auditFrom(request, e ? 'feature.failed' : 'feature.installed', 'ocr', e ? { error: (e as Error).message } : {}).catch(
          () => {},
        );
      },
    );
    if (started) await auditFrom(request, 'feature.install', 'ocr', { queued: ['ocr'] });
    return { queued: started ? ['ocr'] : [], installed: [], features: [await featureStatus(dataDir, 'ocr', features)] };
  };

  app.post('/api/v1/admin/tools/:toolId/features/install', async (request, reply) => {
    requirePermission(request, 'features:manage');
    const { toolId } = request.params as { toolId: string };
    const tool = findTool(toolId);
    if (!tool) throw new KilnError('NOT_FOUND', `No tool ${toolId}.`);
    if (tool.needs?.optionalBundles?.includes('ocr')) return reply.code(202).send({ tool: toolId, ...(await installOcr(request)) });
    // Optional bundles too: they add a tier or setting (noise-removal's model tiers, deepEnhance).
    const bundles = [...(tool.needs?.bundles ?? []), ...(tool.needs?.optionalBundles ?? [])];
    if (!bundles.length) throw new KilnError('VALIDATION_ERROR', `${toolId} needs no feature bundle.`, { reason: 'no-bundle' });
    const unknown = bundles.filter((b) => !findBundle(b));
    if (unknown.length) {
      throw new KilnError('FEATURE_INCOMPATIBLE', `${toolId} needs ${unknown.join(', ')}, which this version of kiln cannot install yet.`, {
        reason: 'bundle-unavailable',
      });
    }
    return reply.code(202).send({ tool: toolId, ...(await install(bundles, request, toolId)) });
  });

  app.post('/api/v1/admin/features/:bundle/install', async (request, reply) => {
    requirePermission(request, 'features:manage');
    const { bundle } = request.params as { bundle: string };
    if (bundle === 'ocr') return reply.code(202).send(await installOcr(request));
    if (!findBundle(bundle)) await featureStatus(dataDir, bundle); // NOT_FOUND for unknown ids
    if (!findBundle(bundle))
      throw new KilnError('FEATURE_INCOMPATIBLE', `This version of kiln cannot install ${bundle} yet.`, { reason: 'bundle-unavailable' });
    return reply.code(202).send(await install([bundle], request, bundle));
  });

  app.delete('/api/v1/admin/features/:bundle', async (request, reply) => {
    requirePermission(request, 'features:manage');
    const { bundle } = request.params as { bundle: string };
    const before = await featureStatus(dataDir, bundle, features);
    if (before.state === 'missing' || before.state === 'unavailable') {
      throw new KilnError('NOT_FOUND', `${bundle} is not installed.`);
    }
    if (bundle === 'ocr') await features.exclusive(() => removeGenerations(dataDir));
    else await features.remove(bundle);
    await auditFrom(request, 'feature.remove', bundle);
    return reply.code(204).send();
  });

  app.post('/api/v1/admin/features/import', async (request, reply) => {
    requirePermission(request, 'features:manage');
    if (!request.isMultipart()) {
      throw new KilnError('VALIDATION_ERROR', 'Send multipart/form-data with the bundle archive in the field "archive".', {
        details: [{ path: 'archive', message: 'required' }],
      });
    }
    const dir = await mkdtemp(path.join(config.dataDir, 'ai-import-'));
    try {
      let archive: string | undefined;
      let index: string | undefined;
      for await (const part of request.parts({ limits: { fileSize: importLimitBytes(), files: 2, fields: 5 } })) {
        if (part.type !== 'file') continue;
        if (part.fieldname !== 'archive' && part.fieldname !== 'index') {
          throw new KilnError(
            'VALIDATION_ERROR',
            `Unknown file field "${part.fieldname}": send a bundle archive in "archive", or the OCR runtime's index in "index" and its archive in "archive".`,
            { details: [{ path: part.fieldname, message: 'unknown file field' }] },
          );
        }
        const file = path.join(dir, part.fieldname === 'index' ? 'ocr-runtime-index.json' : 'archive.tar');
        await pipeline(part.file, createWriteStream(file));
        if (part.file.truncated)
          throw new KilnError(
            'LIMIT_EXCEEDED',
            `The ${part.fieldname} is larger than ${importLimitBytes() / 1048576} MB (FEATURE_IMPORT_MAX_MB).`,
          );
        if (part.fieldname === 'index') index = file;
        else archive = file;
      }
      if (!archive)
        throw new KilnError('VALIDATION_ERROR', 'No archive: send it in the multipart field "archive".', {
          details: [{ path: 'archive', message: 'required' }],
        });
      if (index) {
        // The OCR runtime release: signed index + archive, verified, smoke-tested, then switched in.
        const r = await features.exclusive(() => installGeneration(dataDir, { indexFile: index, archiveFile: archive }));
        await auditFrom(request, 'feature.import', 'ocr', { version: r.generation.release, generation: r.generation.id });
        return reply.code(201).send(await featureStatus(dataDir, 'ocr', features));
      }
      const r = await features.importArchive(archive, request.user?.id);
      await auditFrom(request, 'feature.import', r.bundle, { version: r.version });
      return reply.code(201).send(await featureStatus(dataDir, r.bundle, features));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
}
