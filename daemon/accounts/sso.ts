/**
 * Single sign-on users and the short-lived state of SSO round trips. An SSO identity (provider +
 * subject) is linked to one local user: found by the link, else created with a free username, the
 * settings' default role (ssoDefaultRole), and admin when the identity is in the configured admin
 * group. Being in the admin group promotes at each login; leaving it does not demote (an admin does
 * that, so the last-admin rule holds).
 *
 * A local user whose username equals the identity's verified e-mail is linked only when the operator
 * says so (SSO_LINK_EXISTING=true), and never when it is an admin or has MFA: whoever controls the IdP
 * account (or the e-mail claim of a careless IdP) would otherwise take those over without their
 * password or second factor. Otherwise the sign-in is refused, naming the conflict. A linked user with
 * MFA still answers its MFA challenge after SSO.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { KilnError } from '../../src/core/errors.js';
import { RateLimiter } from '../http/rate-limit.js';
import type { DaemonContext } from '../context.js';
import { bumpCredentials } from '../auth/credentials-version.js';
import type { Database, Role, UsersTable } from '../store/schema.js';
import { createUser, findUserById, findUserByName, findUserByNameAnyCase } from '../store/users.js';
import { audit } from './audit.js';
import { issueSession } from './login.js';
import { createChallenge } from './mfa.js';
import { attemptSucceeded, failedAttempt, reserveAttempt, ssoThrottleKeys } from './throttle.js';
import { getSettings, requireFeature, type Feature } from './settings.js';

export interface SsoIdentity {
  provider: 'oidc' | 'saml';
  subject: string;
  /**
   * OIDC: the bare `sub` that links made before subjects carried their issuer hold. Such a link is
   * taken over by the first sign-in with it, and bound to that (the configured) issuer from then on.
   */
  legacySubject?: string;
  username?: string;
  email?: string;
  emailVerified?: boolean;
  groups: string[];
}

const SSO_STATE_TTL_MS = 10 * 60_000;

/** A cookie's value from the Cookie header (the SSO round trips bind the browser with one). */
export function cookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return v.join('=');
  }
  return undefined;
}

/**
 * Sign-ins started with single sign-on, per client address and minute. Each start stores its state for
 * SSO_STATE_TTL_MS until the callback: under the general rate limit alone one address could make
 * 60,000 rows in that time. A person starts a handful.
 */
export const SSO_STARTS_PER_MINUTE = 60;

/** The limiter of one SSO start route (per instance, like the general rate limit). */
export function ssoStartLimiter(protocol: 'OIDC' | 'SAML'): RateLimiter {
  return new RateLimiter(SSO_STARTS_PER_MINUTE, {
    counted: `${protocol} sign-ins started from this address`,
    source: 'a fixed limit per address',
  });
}

export async function putSsoRequest(
  db: Kysely<Database>,
  kind: string,
  id: string,
  data: unknown,
  ttlMs = SSO_STATE_TTL_MS,
): Promise<void> {
  await db.deleteFrom('sso_requests').where('expires_at', '<', Date.now()).execute();
  await db
    .insertInto('sso_requests')
    .values({ id: `${kind}:${id}`, kind, data: JSON.stringify(data), expires_at: Date.now() + ttlMs })
    .execute();
}

/** Reads and deletes (single use); undefined when unknown or expired. */
export async function takeSsoRequest<T>(db: Kysely<Database>, kind: string, id: string): Promise<T | undefined> {
  const key = `${kind}:${id}`;
  const row = await db.selectFrom('sso_requests').selectAll().where('id', '=', key).executeTakeFirst();
  if (!row) return undefined;
  const r = await db.deleteFrom('sso_requests').where('id', '=', key).executeTakeFirst();
  // Two racing callbacks with the same state: only the one that deleted the row continues.
  if (Number(r.numDeletedRows) === 0 || Number(row.expires_at) <= Date.now()) return undefined;
  return JSON.parse(row.data) as T;
}

export async function peekSsoRequest(db: Kysely<Database>, kind: string, id: string): Promise<boolean> {
  const row = await db.selectFrom('sso_requests').select('expires_at').where('id', '=', `${kind}:${id}`).executeTakeFirst();
  return !!row && Number(row.expires_at) > Date.now();
}

function baseUsername(id: SsoIdentity): string {
  const raw = id.username || id.email || `${id.provider}-${id.subject}`;
  return raw.replace(/[^A-Za-z0-9._@+-]/g, '-').slice(0, 90) || `${id.provider}-user`;
}

/** The identity's name, else that name numbered: never an existing name, nor a case variant of one (an IdP user calling itself "Admin"). */
async function freeUsername(db: Kysely<Database>, base: string): Promise<string> {
  if (!(await findUserByNameAnyCase(db, base))) return base;
  for (let i = 2; i < 1000; i++) if (!(await findUserByNameAnyCase(db, `${base}-${i}`))) return `${base}-${i}`;
  throw new KilnError('CONFLICT', `No free username near ${base}.`);
}

/** The local user linked to the identity. */
function linkedUser(db: Kysely<Database>, id: SsoIdentity): Promise<UsersTable | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where('sso_provider', '=', id.provider)
    .where('sso_subject', '=', id.subject)
    .executeTakeFirst();
}

/** The user of a link made before OIDC subjects carried their issuer, now bound to the identity's issuer. */
async function claimLegacyLink(db: Kysely<Database>, id: SsoIdentity): Promise<UsersTable | undefined> {
  if (!id.legacySubject) return undefined;
  await db
    .updateTable('users')
    .set({ sso_subject: id.subject })
    .where('sso_provider', '=', id.provider)
    .where('sso_subject', '=', id.legacySubject)
    .execute();
  return linkedUser(db, id);
}

/**
 * A new passwordless user under a free name, linked to the identity in the same transaction. Both are
 * unique in the database (migrations 0770, 0780), and another sign-in can get there first between the
 * look-ups and the insert: the same identity signing in twice at once (two tabs) gets the account the
 * other request made; another IdP user with the same preferred_username takes the name, and this one
 * the next free name.
 */
async function createSsoUser(db: Kysely<Database>, id: SsoIdentity, role: Role): Promise<{ user: UsersTable; created: boolean }> {
  const base = baseUsername(id);
  for (let attempt = 0; ; attempt++) {
    const username = await freeUsername(db, base);
    try {
      const user = await db.transaction().execute(async (tx) => {
        const row = await createUser(tx, { username, password: null, role });
        await tx.updateTable('users').set({ sso_provider: id.provider, sso_subject: id.subject }).where('id', '=', row.id).execute();
        return row;
      });
      return { user, created: true };
    } catch (e) {
      const other = await linkedUser(db, id);
      if (other) return { user: other, created: false };
      if (attempt >= 2 || !(await findUserByNameAnyCase(db, username))) throw e;
    }
  }
}

export async function userForIdentity(
  ctx: DaemonContext,
  id: SsoIdentity,
  adminGroup: string | undefined,
): Promise<{ user: UsersTable; created: boolean }> {
  const db = ctx.store.db;
  const isAdmin = !!adminGroup && id.groups.includes(adminGroup);
  let user: UsersTable | undefined = (await linkedUser(db, id)) ?? (await claimLegacyLink(db, id));
  let created = false;
  if (!user && id.email && id.emailVerified) {
    const byMail = await findUserByName(db, id.email);
    if (byMail && !byMail.sso_provider) {
      const why = !ctx.config.accounts.ssoLinkExisting
        ? 'linking existing accounts is off (SSO_LINK_EXISTING)'
        : Number(byMail.service ?? 0) === 1
          ? 'it is a service account, which never signs in interactively'
          : byMail.role === 'admin'
            ? 'it is an administrator account'
            : Number(byMail.mfa_enabled ?? 0) === 1
              ? 'it has MFA enabled'
              : undefined;
      if (why) {
        await audit(db, { event: 'login.sso-refused', actor: null, target: byMail.username, details: { provider: id.provider, why } });
        throw new KilnError(
          'FORBIDDEN',
          `A local account named ${id.email} exists and is not linked to this ${id.provider.toUpperCase()} identity: ${why}. Sign in with its password, or ask an administrator to rename or remove it.`,
          { reason: 'sso-link-refused' },
        );
      }
      await audit(db, {
        event: 'user.sso-link',
        actor: null,
        target: byMail.username,
        details: { provider: id.provider, subject: id.subject },
      });
      await db
        .updateTable('users')
        .set({ sso_provider: id.provider, sso_subject: id.subject, updated_at: Date.now() })
        .where('id', '=', byMail.id)
        .execute();
      user = byMail;
    }
  }
  if (!user) {
    const role: Role = isAdmin ? 'admin' : (await getSettings(db, ctx.config)).ssoDefaultRole;
    ({ user, created } = await createSsoUser(db, id, role));
  } else if (isAdmin && user.role !== 'admin' && user.disabled_at == null) {
    // A promotion like any other: in the audit log, and cached key verifications (every instance) forgotten.
    await db.transaction().execute(async (tx) => {
      await tx.updateTable('users').set({ role: 'admin', updated_at: Date.now() }).where('id', '=', user!.id).execute();
      await bumpCredentials(tx);
    });
    ctx.auth.forgetUser(user.id);
    await audit(db, {
      event: 'user.update',
      actor: null,
      target: user.username,
      details: { id: user.id, role: { from: user.role, to: 'admin' }, via: id.provider, group: adminGroup },
    });
  }
  return { user: (await findUserById(db, user.id))!, created };
}

export async function requireSso(ctx: DaemonContext, feature: Extract<Feature, 'oidc' | 'saml'>): Promise<void> {
  if (!ctx.config.accounts[feature]) {
    const vars =
      feature === 'oidc'
        ? 'OIDC_ISSUER, OIDC_CLIENT_ID, OIDC_REDIRECT_URL'
        : 'SAML_ENTRY_POINT, SAML_ISSUER, SAML_IDP_CERT, SAML_CALLBACK_URL';
    throw new KilnError('FEATURE_DISABLED', `${feature.toUpperCase()} sign-in is not configured (set ${vars}).`, { details: { feature } });
  }
  await requireFeature(ctx.store.db, ctx.config, feature);
}

/** Signs the identity in and answers: JSON, or a redirect to SSO_SUCCESS_REDIRECT with the token in the fragment. */
export async function finishSso(
  ctx: DaemonContext,
  request: FastifyRequest,
  reply: FastifyReply,
  id: SsoIdentity,
  adminGroup: string | undefined,
): Promise<unknown> {
  const { user, created } = await userForIdentity(ctx, id, adminGroup);
  if (user.disabled_at != null) {
    await audit(ctx.store.db, {
      event: 'login.sso-refused',
      actor: null,
      target: user.username,
      details: { provider: id.provider, why: 'disabled' },
    });
    throw new KilnError('UNAUTHORIZED', 'This account is disabled.', { reason: 'account-disabled' });
  }
  if (created)
    await audit(ctx.store.db, {
      event: 'user.create',
      actor: null,
      target: user.username,
      ip: request.ip,
      details: { id: user.id, role: user.role, via: id.provider },
    });
  await audit(ctx.store.db, {
    event: 'login.sso',
    actor: user,
    target: user.username,
    ip: request.ip,
    details: { provider: id.provider, subject: id.subject, created },
  });
  const redirect = ctx.config.accounts.ssoSuccessRedirect;
  if (Number(user.mfa_enabled ?? 0) === 1) {
    // The IdP vouched for the first factor only: the second is still this account's own.
    await audit(ctx.store.db, { event: 'login.mfa-challenge', actor: user, target: user.username, ip: request.ip });
    const challenge = { requiresMfa: 'true', mfaToken: await createChallenge(ctx.store.db, user.id) };
    if (redirect) return reply.redirect(`${redirect}#${new URLSearchParams(challenge)}`, 303);
    return { requiresMfa: true, mfaToken: challenge.mfaToken, created };
  }
  const session = await issueSession(ctx, user);
  if (redirect) {
    // The fragment never reaches a server log or a Referer header.
    return reply.redirect(`${redirect}#${new URLSearchParams({ token: session.token, expiresAt: session.expiresAt })}`, 303);
  }
  return { ...session, created };
}

/**
 * Runs an SSO callback under the login throttle of its client address: reserved before anything is
 * checked (429 with Retry-After once locked), a callback refused as unauthenticated (bad state, code,
 * token or signature) counted and audited like a failed login, anything else given back.
 */
export async function guardedSso<T>(
  ctx: DaemonContext,
  request: FastifyRequest,
  reply: FastifyReply,
  provider: 'oidc' | 'saml',
  run: () => Promise<T>,
): Promise<T> {
  const keys = ssoThrottleKeys(provider, request.ip);
  await reserveAttempt(ctx.store, keys, ctx.config.accounts, reply);
  try {
    const r = await run();
    await attemptSucceeded(ctx.store, keys, true);
    return r;
  } catch (e) {
    if (e instanceof KilnError && e.code === 'UNAUTHORIZED')
      await failedAttempt(
        ctx.store,
        keys,
        ctx.config.accounts,
        (locked) => ({
          event: locked ? 'login.locked' : 'login.failure',
          target: provider,
          ip: request.ip,
          details: { why: e.reason ?? provider },
        }),
        reply,
      );
    else await attemptSucceeded(ctx.store, keys, false);
    throw e;
  }
}
