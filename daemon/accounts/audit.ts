/** The security audit log: who did what to whom, from where. Never holds secrets (no passwords, keys, codes). */
import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { newId } from '../auth/secrets.js';
import type { Database } from '../store/schema.js';
import type { AuditEventsTable } from './schema.js';

export type AuditEvent =
  | 'login.success'
  | 'login.failure'
  | 'login.locked'
  | 'login.mfa-challenge'
  | 'login.sso'
  | 'login.sso-refused'
  | 'logout'
  | 'password.change'
  | 'password.reset'
  | 'user.create'
  | 'user.sso-link'
  | 'user.update'
  | 'user.delete'
  | 'key.create'
  | 'key.revoke'
  | 'key.rotate'
  | 'key.auth-failure'
  | 'key.auth-locked'
  | 'mfa.enroll'
  | 'mfa.enable'
  | 'mfa.disable'
  | 'mfa.reset'
  | 'mfa.recovery-code-used'
  | 'team.create'
  | 'team.rename'
  | 'team.delete'
  | 'settings.update'
  | 'branding.update'
  | 'watch-folder.create'
  | 'watch-folder.delete'
  | 'feature.install'
  | 'feature.installed'
  | 'feature.failed'
  | 'feature.remove'
  | 'feature.import';

export interface AuditInput {
  event: AuditEvent;
  actor?: { id: string; username: string } | null;
  target?: string | null;
  ip?: string | null;
  details?: Record<string, unknown>;
}

export async function audit(db: Kysely<Database>, e: AuditInput): Promise<void> {
  await db
    .insertInto('audit_events')
    .values({
      id: newId(),
      at: Date.now(),
      event: e.event,
      actor_id: e.actor?.id ?? null,
      actor_name: e.actor?.username ?? null,
      target: e.target ?? null,
      ip: e.ip ?? null,
      details: e.details ? JSON.stringify(e.details) : null,
    })
    .execute();
}

/** Shorthand for routes: the signed-in caller and its address. */
export function auditFrom(
  request: FastifyRequest,
  event: AuditEvent,
  target?: string | null,
  details?: Record<string, unknown>,
): Promise<void> {
  const u = request.user;
  return audit(request.server.kiln.store.db, {
    event,
    actor: u ? { id: u.id, username: u.username } : null,
    target,
    ip: request.ip,
    details,
  });
}

export function auditView(r: AuditEventsTable): Record<string, unknown> {
  return {
    id: r.id,
    at: new Date(Number(r.at)).toISOString(),
    event: r.event,
    actor: r.actor_id ? { id: r.actor_id, username: r.actor_name } : null,
    target: r.target,
    ip: r.ip,
    details: r.details ? JSON.parse(r.details) : null,
  };
}

export async function listAudit(
  db: Kysely<Database>,
  o: { limit: number; before?: number; event?: string; actorId?: string },
): Promise<AuditEventsTable[]> {
  let q = db.selectFrom('audit_events').selectAll().orderBy('at', 'desc').orderBy('id', 'desc').limit(o.limit);
  if (o.before !== undefined) q = q.where('at', '<', o.before);
  if (o.event) q = q.where('event', 'like', `${o.event}%`);
  if (o.actorId) q = q.where('actor_id', '=', o.actorId);
  return q.execute();
}
