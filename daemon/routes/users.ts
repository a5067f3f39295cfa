/** User administration (authority rules in daemon/accounts/users.ts) and changing one's own password. */
import type { FastifyInstance } from 'fastify';
import { KilnError } from '../../src/core/errors.js';
import { auditFrom } from '../accounts/audit.js';
import { bodyObject, str } from '../accounts/body.js';
import { guardedCheck, wrongCurrentPassword } from '../accounts/login.js';
import {
  deleteUser,
  listUsers,
  refuseSelfReset,
  registerUser,
  requireTarget,
  setPassword,
  updateUser,
  userView,
} from '../accounts/users.js';
import { requireInteractiveUser, requireUser } from '../auth/authenticate.js';
import { requirePermission } from '../auth/permissions.js';
import { normalizePassword, verifyPassword } from '../auth/secrets.js';
import { findUserById } from '../store/users.js';

export async function userRoutes(app: FastifyInstance): Promise<void> {
  const { store, auth, jobs } = app.kiln;
  const db = store.db;

  app.get('/api/auth/users', async (request) => {
    requirePermission(request, 'users:manage');
    return { users: await listUsers(db) };
  });

  // POST /api/auth/users is the resource-style name of the same action (issue #22); both stay.
  for (const url of ['/api/auth/register', '/api/auth/users']) {
    app.post(url, async (request, reply) => {
      requirePermission(request, 'users:manage');
      const user = await registerUser(db, requireUser(request), bodyObject(request.body));
      await auditFrom(request, 'user.create', user.username, {
        id: user.id,
        role: user.role,
        team: user.team_id,
        ...(Number(user.service ?? 0) === 1 ? { service: true } : {}),
      });
      return reply.code(201).send({ user: await userView(db, user) });
    });
  }

  app.put('/api/auth/users/:id', async (request) => {
    requirePermission(request, 'users:manage');
    const { id } = request.params as { id: string };
    const { user, changes } = await updateUser(db, auth, requireUser(request), id, bodyObject(request.body), jobs);
    if (Object.keys(changes).length) await auditFrom(request, 'user.update', user.username, { id, ...changes });
    return { user: await userView(db, user) };
  });

  app.post('/api/auth/users/:id/reset-password', async (request) => {
    requirePermission(request, 'users:manage');
    const { id } = request.params as { id: string };
    const target = await requireTarget(db, requireUser(request), id);
    refuseSelfReset(request.user!, target, 'POST /api/auth/change-password (it asks for the current password)');
    const body = bodyObject(request.body);
    await setPassword(db, auth, target, str(body, 'newPassword'), undefined, app.kiln.config.dataDir);
    await auditFrom(request, 'password.reset', target.username, { id });
    return { ok: true };
  });

  app.delete('/api/auth/users/:id', async (request) => {
    requirePermission(request, 'users:manage');
    const { id } = request.params as { id: string };
    const { user, ...counts } = await deleteUser(db, auth, jobs, requireUser(request), id, app.kiln.config.sharedDir);
    await auditFrom(request, 'user.delete', user.username, { id, ...counts });
    return { ok: true, ...counts };
  });

  app.post('/api/auth/change-password', async (request, reply) => {
    const caller = requireInteractiveUser(request);
    const body = bodyObject(request.body);
    const current = str(body, 'currentPassword');
    const next = str(body, 'newPassword');
    const user = await findUserById(db, caller.id);
    if (!user) throw new KilnError('UNAUTHORIZED', 'The account no longer exists.');
    // Nothing to check a current password against: said so, not "wrong password" counted toward a lock.
    if (!user.password_hash)
      throw new KilnError('CONFLICT', `${user.username} signs in through single sign-on and has no password to change.`, {
        reason: 'no-password',
      });
    // Counted like a login attempt: a stolen session cannot guess the password here without limit.
    await guardedCheck(
      app.kiln,
      request,
      reply,
      user.username,
      () => verifyPassword(current, user.password_hash),
      () => wrongCurrentPassword(app.kiln, request, reply, user.username, 'change-password: wrong current password'),
    );
    if (normalizePassword(current) === normalizePassword(next))
      throw new KilnError('VALIDATION_ERROR', 'The new password must differ from the current one.', {
        details: [{ path: 'newPassword', message: 'unchanged' }],
      });
    await setPassword(db, auth, user, next, caller.sessionId, app.kiln.config.dataDir);
    await auditFrom(request, 'password.change', user.username);
    return { ok: true, keptSession: !!caller.sessionId };
  });
}
