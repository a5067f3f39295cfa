/**
 * Roles and permissions: the single place that decides what a role may do. Routes call
 * requirePermission(request, '<permission>'); add new permissions here, not checks in routes.
 */
import type { FastifyRequest } from 'fastify';
import { KilnError } from '../../src/core/errors.js';
import type { Role } from '../store/schema.js';

export const PERMISSIONS = [
  'tools:use',
  'jobs:all',
  'files:all',
  'pipelines:all',
  'keys:all',
  'users:manage',
  'teams:manage',
  'settings:write',
  'branding:write',
  'system:health',
  'features:manage',
  'audit:read',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

const ROLE_PERMISSIONS: Record<Role, ReadonlySet<Permission>> = {
  admin: new Set(PERMISSIONS),
  user: new Set<Permission>(['tools:use']),
};

export function roleHas(role: Role, permission: Permission): boolean {
  return ROLE_PERMISSIONS[role]?.has(permission) ?? false;
}

export function hasPermission(request: FastifyRequest, permission: Permission): boolean {
  return !!request.user && roleHas(request.user.role, permission);
}

/** Throws FORBIDDEN naming the missing permission (UNAUTHORIZED when nobody is signed in). */
export function requirePermission(request: FastifyRequest, permission: Permission): void {
  if (!request.user) throw new KilnError('UNAUTHORIZED', 'Sign in first: send Authorization: Bearer <session token or API key>.');
  if (!roleHas(request.user.role, permission)) {
    throw new KilnError('FORBIDDEN', `This needs the permission ${permission}, which the role ${request.user.role} does not have.`, {
      details: { permission },
    });
  }
}
