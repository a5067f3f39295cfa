/** The settings record, branding (with the logo) and the audit log. */
import type { FastifyInstance } from 'fastify';
import { KilnError } from '../../src/core/errors.js';
import { auditFrom, auditView, listAudit } from '../accounts/audit.js';
import {
  applySettings,
  deleteLogo,
  getBranding,
  getSettings,
  LOGO_MAX_BYTES,
  readLogo,
  saveLogo,
  updateBranding,
  updateSettings,
} from '../accounts/settings.js';
import { hasPermission, requirePermission } from '../auth/permissions.js';

export async function settingsRoutes(app: FastifyInstance): Promise<void> {
  const { store, config } = app.kiln;
  const db = store.db;
  // Stored overrides apply from the start.
  applySettings(config, await getSettings(db, config));

  // Admins read the whole record. Other users get only what the UI needs to draw itself: which account
  // features are on (MFA enrollment, SSO buttons) and how long outputs are kept; the SSO default role and
  // the sync window are an operator's business.
  app.get('/api/v1/settings', async (request) => {
    const settings = await getSettings(db, config);
    if (hasPermission(request, 'settings:write')) return { settings };
    return { settings: { features: settings.features, jobTtlHours: settings.jobTtlHours } };
  });

  app.put('/api/v1/settings', async (request) => {
    requirePermission(request, 'settings:write');
    const { settings, changed } = await updateSettings(db, config, request.body);
    await auditFrom(request, 'settings.update', null, { changed, settings });
    return { settings };
  });

  // Public: the sign-in page shows the branding before anyone is signed in.
  app.get('/api/v1/branding', { config: { public: true } }, async () => ({ branding: await getBranding(db) }));

  app.put('/api/v1/branding', async (request) => {
    requirePermission(request, 'branding:write');
    const branding = await updateBranding(db, request.body);
    await auditFrom(request, 'branding.update', null, { productName: branding.productName, colors: branding.colors });
    return { branding };
  });

  app.get('/api/v1/branding/logo', { config: { public: true } }, async (_request, reply) => {
    const logo = await readLogo(db);
    if (!logo) throw new KilnError('NOT_FOUND', 'No logo has been uploaded.');
    return reply
      .type(logo.contentType)
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', "default-src 'none'")
      .header('cache-control', 'public, max-age=300')
      .send(logo.data);
  });

  app.post('/api/v1/branding/logo', async (request, reply) => {
    requirePermission(request, 'branding:write');
    if (!request.isMultipart()) throw new KilnError('USAGE_ERROR', 'Upload the logo as multipart/form-data in the field "file".');
    const part = await request.file({ limits: { fileSize: LOGO_MAX_BYTES + 1, files: 1 } });
    if (!part)
      throw new KilnError('VALIDATION_ERROR', 'No file in the upload (field "file").', {
        details: [{ path: 'file', message: 'required' }],
      });
    const data = await part.toBuffer().catch((e: { code?: string }) => {
      if (e?.code === 'FST_REQ_FILE_TOO_LARGE')
        throw new KilnError('LIMIT_EXCEEDED', `The logo is larger than the limit of ${LOGO_MAX_BYTES} bytes (512 KB).`);
      throw e;
    });
    const type = await saveLogo(db, data);
    await auditFrom(request, 'branding.update', null, { logo: { type, bytes: data.length } });
    return reply.code(201).send({ branding: await getBranding(db) });
  });

  app.delete('/api/v1/branding/logo', async (request) => {
    requirePermission(request, 'branding:write');
    if (!(await deleteLogo(db))) throw new KilnError('NOT_FOUND', 'No logo has been uploaded.');
    await auditFrom(request, 'branding.update', null, { logo: null });
    return { ok: true };
  });

  app.get('/api/v1/admin/audit', async (request) => {
    requirePermission(request, 'audit:read');
    const q = request.query as { limit?: string; before?: string; event?: string; actor?: string };
    const limit = Math.min(500, Math.max(1, Number(q.limit ?? 100) || 100));
    const before = q.before ? Date.parse(q.before) : undefined;
    if (q.before && !Number.isFinite(before))
      throw new KilnError('VALIDATION_ERROR', 'before must be an ISO 8601 date.', { details: [{ path: 'before', message: 'invalid' }] });
    const rows = await listAudit(db, { limit, before, event: q.event, actorId: q.actor });
    return { events: rows.map(auditView) };
  });
}
