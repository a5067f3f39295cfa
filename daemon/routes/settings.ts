/** The settings record (with the live limits), per-team limits, branding (with the logo) and the audit log. */
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
  getTeamLimits,
  TEAM_LIMITS_SCHEMA,
  updateBranding,
  updateSettings,
  updateTeamLimits,
} from '../accounts/settings.js';
import { hasPermission, requirePermission } from '../auth/permissions.js';
import { intQuery } from '../http/query.js';
import { errorResponses, json } from '../openapi/common.js';
import type { RouteDoc } from '../openapi/route-doc.js';

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
    return { settings: { features: settings.features, outputTtlHours: settings.outputTtlHours, jobTtlHours: settings.jobTtlHours } };
  });

  app.put('/api/v1/settings', async (request) => {
    requirePermission(request, 'settings:write');
    const { settings, changed } = await updateSettings(db, config, request.body);
    // This instance applies the change at once; the others within LIVE_LIMITS_MS.
    await app.kiln.limits.refresh();
    await auditFrom(request, 'settings.update', null, { changed, settings });
    return { settings };
  });

  // Per-team limits: a team's members get these over the server's values (the rest follow the server).
  const teamName = async (id: string) => {
    const t = await db.selectFrom('teams').select('name').where('id', '=', id).executeTakeFirst();
    if (!t) throw new KilnError('NOT_FOUND', `No team ${id}.`);
    return t.name;
  };
  const teamLimitsView = async (id: string) => {
    const limits = await getTeamLimits(db, id);
    return { teamId: id, limits, effective: await app.kiln.limits.forUser({ teamId: id }) };
  };
  app.get('/api/v1/teams/:id/limits', { schema: GET_TEAM_LIMITS_DOC }, async (request) => {
    requirePermission(request, 'settings:write');
    const { id } = request.params as { id: string };
    await teamName(id);
    return teamLimitsView(id);
  });

  app.put('/api/v1/teams/:id/limits', { schema: PUT_TEAM_LIMITS_DOC }, async (request) => {
    requirePermission(request, 'settings:write');
    const { id } = request.params as { id: string };
    const name = await teamName(id);
    const limits = await updateTeamLimits(db, id, request.body);
    await app.kiln.limits.refresh();
    await auditFrom(request, 'settings.update', name, { team: id, changed: Object.keys(bodyKeys(request.body)), limits });
    return teamLimitsView(id);
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
    const limit = Math.min(500, intQuery(q.limit, 'limit', 100));
    const before = q.before ? Date.parse(q.before) : undefined;
    if (q.before && !Number.isFinite(before))
      throw new KilnError('VALIDATION_ERROR', 'before must be an ISO 8601 date.', { details: [{ path: 'before', message: 'invalid' }] });
    const rows = await listAudit(db, { limit, before, event: q.event, actorId: q.actor });
    return { events: rows.map(auditView) };
  });
}

function bodyKeys(body: unknown): Record<string, unknown> {
  return body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
}

const LIMITS = {
  type: 'object',
  properties: Object.fromEntries(
    ['maxUploadMb', 'libraryQuotaMb', 'userQuotaMb', 'rateLimitPerMinute'].map((k) => [k, { type: 'number' }]),
  ),
};
const TEAM_LIMITS = {
  type: 'object',
  required: ['teamId', 'limits', 'effective'],
  properties: {
    teamId: { type: 'string' },
    limits: { ...LIMITS, description: "The team's own values (what it overrides)." },
    effective: { ...LIMITS, description: "What the team's members get now: these over the server's settings." },
  },
};
const teamId = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };

const GET_TEAM_LIMITS_DOC: RouteDoc = {
  operationId: 'getTeamLimits',
  tags: ['settings'],
  summary: "A team's limits: its overrides and what its members get (settings:write).",
  parameters: [teamId],
  response: { '200': json(TEAM_LIMITS), ...errorResponses([401, 403, 404]) },
};

const PUT_TEAM_LIMITS_DOC: RouteDoc = {
  operationId: 'updateTeamLimits',
  tags: ['settings'],
  summary: "Set a team's limits (settings:write; partial, null clears one).",
  description:
    "maxUploadMb, libraryQuotaMb, userQuotaMb and rateLimitPerMinute for the team's members, over the server's settings; applied without a restart (on every instance within 2 s). Audited as settings.update.",
  parameters: [teamId],
  requestBody: { required: true, content: { 'application/json': { schema: TEAM_LIMITS_SCHEMA } } },
  response: { '200': json(TEAM_LIMITS), ...errorResponses([400, 401, 403, 404]) },
};
