/**
 * Teams: admins (teams:manage) see and manage every team with its members. Other users see only their
 * own team, without the member list: the spec gives "Manage users and teams" to admins alone, and the
 * names of other teams are none of a user's business.
 */
import type { FastifyInstance } from 'fastify';
import { KilnError } from '../../src/core/errors.js';
import { auditFrom } from '../accounts/audit.js';
import { bodyObject, label } from '../accounts/body.js';
import { createTeam, deleteTeam, renameTeam } from '../accounts/teams.js';
import { hasPermission, requirePermission } from '../auth/permissions.js';

function teamName(body: Record<string, unknown>): string {
  return label(body, 'name', 100);
}

export async function teamRoutes(app: FastifyInstance): Promise<void> {
  const db = app.kiln.store.db;

  const view = async (id: string) => {
    const t = await db.selectFrom('teams').selectAll().where('id', '=', id).executeTakeFirst();
    if (!t) throw new KilnError('NOT_FOUND', `No team ${id}.`);
    const members = await db.selectFrom('users').select(['id', 'username']).where('team_id', '=', id).orderBy('username').execute();
    return { id: t.id, name: t.name, createdAt: new Date(Number(t.created_at)).toISOString(), members };
  };

  app.get('/api/v1/teams', async (request) => {
    if (hasPermission(request, 'teams:manage')) {
      const all = await db.selectFrom('teams').select('id').orderBy('name').execute();
      return { teams: await Promise.all(all.map((t) => view(t.id))) };
    }
    const own = request.user?.teamId;
    if (!own) return { teams: [] };
    const { members: _m, ...team } = await view(own);
    return { teams: [team] };
  });

  app.get('/api/v1/teams/:id', async (request) => {
    requirePermission(request, 'teams:manage');
    return { team: await view((request.params as { id: string }).id) };
  });

  app.post('/api/v1/teams', async (request, reply) => {
    requirePermission(request, 'teams:manage');
    const name = teamName(bodyObject(request.body));
    const id = await createTeam(db, name);
    await auditFrom(request, 'team.create', name, { id });
    return reply.code(201).send({ team: await view(id) });
  });

  app.put('/api/v1/teams/:id', async (request) => {
    requirePermission(request, 'teams:manage');
    const { id } = request.params as { id: string };
    const name = teamName(bodyObject(request.body));
    const before = await view(id);
    await renameTeam(db, id, name);
    await auditFrom(request, 'team.rename', name, { id, from: before.name });
    return { team: await view(id) };
  });

  app.delete('/api/v1/teams/:id', async (request) => {
    requirePermission(request, 'teams:manage');
    const { id } = request.params as { id: string };
    const before = await view(id);
    await deleteTeam(db, id);
    for (const m of before.members) app.kiln.auth.forgetUser(m.id);
    await app.kiln.limits.refresh();
    await auditFrom(request, 'team.delete', before.name, { id, members: before.members.length });
    return { ok: true };
  });
}
