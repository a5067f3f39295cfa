/** Login, logout, session check, the auth configuration, and API keys. */
import type { FastifyInstance } from 'fastify';
import { KilnError } from '../../src/core/errors.js';
import { requireUser } from '../auth/authenticate.js';
import { hasPermission } from '../auth/permissions.js';
import { auditFrom } from '../accounts/audit.js';
import { bodyObject } from '../accounts/body.js';
import { createKeyWithExpiry, keyViews, parseExpiry } from '../accounts/keys.js';
import { passwordLogin } from '../accounts/login.js';
import { deleteApiKey, listApiKeys } from '../store/api-keys.js';
import { deleteSession } from '../store/sessions.js';

function stringField(body: unknown, name: string, max = 1000): string {
  const v = (body as Record<string, unknown> | null | undefined)?.[name];
  if (typeof v !== 'string' || v.length === 0)
    throw new KilnError('VALIDATION_ERROR', `${name} is required (a string).`, { details: [{ path: name, message: 'required' }] });
  if (v.length > max)
    throw new KilnError('VALIDATION_ERROR', `${name} is longer than ${max} characters.`, {
      details: [{ path: name, message: 'too long' }],
    });
  return v;
}

export async function authRoutes(app: FastifyInstance): Promise<void> {
  const { store, config, auth } = app.kiln;

  app.post('/api/auth/login', { config: { public: true } }, async (request, reply) => {
    const username = stringField(request.body, 'username', 200);
    const password = stringField(request.body, 'password');
    // Login protection, MFA challenge and audit: daemon/accounts/login.ts.
    return passwordLogin(app.kiln, request, reply, username, password);
  });

  app.post('/api/auth/logout', async (request) => {
    const user = requireUser(request);
    if (user.sessionId) await deleteSession(store.db, user.sessionId);
    await auditFrom(request, 'logout');
    return { ok: true };
  });

  app.get('/api/auth/session', async (request) => {
    const u = requireUser(request);
    return { user: { id: u.id, username: u.username, role: u.role, teamId: u.teamId }, via: u.via };
  });

  app.get('/api/v1/config/auth', { config: { public: true } }, async () => ({ authEnabled: config.authEnabled }));

  app.post('/api/v1/api-keys', async (request, reply) => {
    const user = requireUser(request);
    const name = stringField(request.body, 'name', 200);
    const created = await createKeyWithExpiry(store.db, user.id, name, parseExpiry(bodyObject(request.body)));
    await auditFrom(request, 'key.create', created.id, { name, expiresAt: created.expiresAt });
    return reply.code(201).send(created);
  });

  app.get('/api/v1/api-keys', async (request) => {
    const user = requireUser(request);
    const all = (request.query as { all?: string }).all === 'true' && hasPermission(request, 'keys:all');
    return { keys: await keyViews(store.db, await listApiKeys(store.db, all ? undefined : user.id), all) };
  });

  app.delete('/api/v1/api-keys/:id', async (request) => {
    const user = requireUser(request);
    const { id } = request.params as { id: string };
    const ok = await deleteApiKey(store.db, id, hasPermission(request, 'keys:all') ? undefined : user.id);
    if (!ok) throw new KilnError('NOT_FOUND', `No API key ${id}.`);
    auth.forgetApiKey(id);
    await auditFrom(request, 'key.revoke', id);
    return { ok: true };
  });
}
