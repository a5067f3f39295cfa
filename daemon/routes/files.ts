/**
 * /api/v1/files: the file library over HTTP (upload, list, get, download, rename, delete, versions,
 * restore) and the FileLibraryHook that lets a tool run take `fileId` as its input and save its output
 * as a new version. Other users' private items answer 404, never 403; a teammate's `team` item can be
 * listed, downloaded and used as an input, and changing it answers 403 (daemon/library/sharing.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { KilnError } from '../../src/core/errors.js';
import { versionFileName } from '../../src/core/paths.js';
import { requireUser } from '../auth/authenticate.js';
import { LibraryService, type VersionRow } from '../library/service.js';
import { parseScopeFilter } from '../library/sharing.js';
import { teamUsage } from '../library/team-usage.js';
import { itemView, versionView } from '../library/views.js';
import { readLibraryUpload } from '../library/upload.js';
import { intQuery } from '../http/query.js';
import { contentDisposition, noneMatch, rangeIf, unsatisfiable } from './download.js';

declare module '../context.js' {
  interface DaemonContext {
    library?: LibraryService;
  }
}

const LIBRARY_SWEEP_MS = 10 * 60_000;

/** A version number from the path or query: undefined for none or `latest`, 400 unless a whole number ≥ 1. */
function versionParam(raw: string | undefined, what = 'version'): number | undefined {
  if (raw === undefined || raw === '' || raw === 'latest') return undefined;
  return intQuery(raw, what, 1);
}

export async function filesRoutes(app: FastifyInstance): Promise<void> {
  const db = app.kiln.store.db;
  /** The owner's live limits (their team's overrides over the settings and the environment). */
  const limitsOf = async (ownerId: string) =>
    app.kiln.limits.forUser(await db.selectFrom('users').select('team_id as teamId').where('id', '=', ownerId).executeTakeFirst());
  const library = new LibraryService(
    db,
    app.kiln.config.sharedDir,
    async (ownerId) => Math.round((await limitsOf(ownerId)).libraryQuotaMb * 1048576),
    app.kiln.storage,
  );
  app.kiln.library = library;
  // Uploads cut short by a crash leave partial files; an hour is far beyond any upload in progress.
  await library.sweepScratch(3_600_000).catch(() => {});
  // Content left without references or half-written by a stopped instance (library/blobs.ts).
  app.kiln.jobs.upkeep.every('library-sweep', LIBRARY_SWEEP_MS, () => library.blobs.sweep());
  app.kiln.fileLibrary = {
    async resolveInput(user, fileId, inDir) {
      return library.materialize(user, fileId, inDir);
    },
    async saveOutput(user, fileId, job) {
      return library.saveJobOutput(user, fileId, job);
    },
  };

  async function upload(request: FastifyRequest, ownerId: string, accepts: readonly string[]) {
    const used = await library.quota.usage(ownerId);
    const quota = await library.quota.limit(ownerId);
    const remaining = quota === 0 ? Infinity : Math.max(0, quota - used);
    const { file, fields } = await readLibraryUpload(
      request,
      await library.blobs.tmpDir(),
      {
        maxUploadBytes: (await app.kiln.limits.forUser(request.user)).maxUploadMb * 1048576,
        remainingQuota: remaining,
        quotaError: (n) => library.quota.error(used, n, quota),
      },
      accepts,
    );
    if (!file)
      throw new KilnError('VALIDATION_ERROR', 'No file: send the content in the multipart field "file".', {
        details: [{ path: 'file', message: 'required' }],
      });
    return { file, fields };
  }

  app.post('/api/v1/files', async (request, reply) => {
    const user = requireUser(request);
    const { file, fields } = await upload(request, user.id, ['name', 'scope']);
    const item = await library.create(user, file, { name: fields.get('name'), scope: fields.get('scope') });
    const versions = await library.versions(item);
    return reply.code(201).send({ ...itemView(item), versions: versions.map(versionView) });
  });

  app.get('/api/v1/files', async (request) => {
    const user = requireUser(request);
    const q = request.query as Record<string, string | undefined>;
    const r = await library.list(user, {
      page: intQuery(q.page, 'page', 1),
      pageSize: intQuery(q.pageSize, 'pageSize', 50),
      type: q.type,
      name: q.name,
      owner: q.owner,
      scope: parseScopeFilter(q.scope),
    });
    return { items: r.items.map(itemView), total: r.total, page: r.page, pageSize: r.pageSize };
  });

  app.get('/api/v1/files/usage', async (request) => {
    const user = requireUser(request);
    const usage = { usedBytes: await library.quota.usage(user.id), quotaBytes: (await library.quota.limit(user.id)) || null };
    // What the user's team shares (its members' `team` items), counted once per distinct content.
    return user.teamId ? { ...usage, team: { id: user.teamId, usedBytes: await teamUsage(app.kiln.store.db, user.teamId) } } : usage;
  });

  app.get('/api/v1/files/:id', async (request) => {
    const user = requireUser(request);
    const item = await library.item(user, (request.params as { id: string }).id);
    return { ...itemView(item), versions: (await library.versions(item)).map(versionView) };
  });

  app.patch('/api/v1/files/:id', async (request) => {
    const user = requireUser(request);
    const body = (request.body ?? {}) as { name?: unknown; scope?: unknown };
    if ((body.name !== undefined && typeof body.name !== 'string') || (body.name === undefined && body.scope === undefined))
      throw new KilnError('VALIDATION_ERROR', 'Send {"name": "new name"} and/or {"scope": "private" | "team"} as JSON.', {
        details: [{ path: 'name', message: 'expected a string' }],
      });
    return itemView(await library.update(user, (request.params as { id: string }).id, { name: body.name, scope: body.scope }));
  });

  // 200 with a body rather than 204, so every client can read the answer the same way.
  app.delete('/api/v1/files/:id', async (request) => {
    const user = requireUser(request);
    const id = (request.params as { id: string }).id;
    await library.deleteItem(user, id);
    return { id, deleted: true };
  });

  app.get('/api/v1/files/:id/versions', async (request) => {
    const user = requireUser(request);
    const item = await library.item(user, (request.params as { id: string }).id);
    return { versions: (await library.versions(item)).map(versionView) };
  });

  app.post('/api/v1/files/:id/versions', async (request, reply) => {
    const user = requireUser(request);
    // Checked before the upload is read: a teammate may use a shared item but not add to it.
    const item = await library.editable(user, (request.params as { id: string }).id);
    // `name` names the version as an uploaded file's name would (its extension names the download);
    // the item's own name and scope change with PATCH.
    const { file, fields } = await upload(request, item.owner_id, ['name']);
    const name = fields.get('name')?.trim();
    const r = await library.addVersion(user, item.id, name ? { ...file, name } : file, { source: 'upload' });
    return reply.code(201).send({ ...itemView(r.item), version: versionView(r.version) });
  });

  app.get('/api/v1/files/:id/download', async (request, reply) => {
    const user = requireUser(request);
    const item = await library.item(user, (request.params as { id: string }).id);
    const v = await library.version(item, versionParam((request.query as { version?: string }).version));
    return sendVersion(request, reply, library, v, versionFileName(item.name, v.name));
  });

  app.get('/api/v1/files/:id/versions/:version/download', async (request, reply) => {
    const user = requireUser(request);
    const p = request.params as { id: string; version: string };
    const item = await library.item(user, p.id);
    const v = await library.version(item, versionParam(p.version));
    return sendVersion(request, reply, library, v, versionFileName(item.name, v.name));
  });

  app.post('/api/v1/files/:id/versions/:version/restore', async (request, reply) => {
    const user = requireUser(request);
    const p = request.params as { id: string; version: string };
    const n = versionParam(p.version);
    if (n === undefined) throw new KilnError('VALIDATION_ERROR', 'Name the version to restore by its number.');
    const r = await library.restore(user, p.id, n);
    return reply.code(201).send({ ...itemView(r.item), version: versionView(r.version) });
  });

  app.delete('/api/v1/files/:id/versions/:version', async (request) => {
    const user = requireUser(request);
    const p = request.params as { id: string; version: string };
    const n = versionParam(p.version);
    if (n === undefined) throw new KilnError('VALIDATION_ERROR', 'Name the version to delete by its number.');
    return itemView(await library.deleteVersion(user, p.id, n));
  });
}

/** `name`: what the download is called (versionFileName: the item's current name). */
async function sendVersion(request: FastifyRequest, reply: FastifyReply, library: LibraryService, v: VersionRow, name: string) {
  const size = Number(v.size);
  const etag = `"${v.blob_hash}"`;
  // If-None-Match (RFC 9110 §13.1.2): a client that holds this content already (the ETag is its
  // sha256, so the bytes cannot differ) gets 304 without them; it got the whole file again.
  if (noneMatch(request.headers['if-none-match'], etag))
    return reply.code(304).header('etag', etag).header('x-kiln-version', String(v.version)).send();
  // S3_DOWNLOADS=redirect: the client fetches the content from the bucket itself.
  const direct = await library.blobs.presignedUrl(v.blob_hash, { disposition: contentDisposition(name), contentType: v.content_type });
  if (direct) return reply.code(302).header('location', direct).header('cache-control', 'no-store').send();
  // If-Range (RFC 9110 §13.1.5): a download resumed after a new version was added must get the whole
  // new content (200), not the rest of the new bytes stitched onto the start of the old ones.
  const range = rangeIf(request.headers, size, { etag });
  if (range === 'invalid') return unsatisfiable(reply, size);
  reply
    .header('content-type', v.content_type)
    .header('content-disposition', contentDisposition(name))
    .header('accept-ranges', 'bytes')
    .header('x-content-type-options', 'nosniff')
    // Stored files are user content: never let a browser run it in this origin.
    .header('content-security-policy', "default-src 'none'; sandbox")
    .header('etag', etag)
    .header('x-kiln-version', String(v.version));
  if (range) {
    reply
      .code(206)
      .header('content-range', `bytes ${range.start}-${range.end}/${size}`)
      .header('content-length', range.end - range.start + 1);
    return reply.send(await library.blobs.open(v.blob_hash, range));
  }
  reply.header('content-length', size);
  return reply.send(await library.blobs.open(v.blob_hash));
}
