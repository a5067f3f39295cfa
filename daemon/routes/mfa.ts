/** TOTP MFA: enrollment, login completion, disabling, and the admin reset. */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { KilnError } from '../../src/core/errors.js';
import { audit, auditFrom } from '../accounts/audit.js';
import { bodyObject, optStr, str } from '../accounts/body.js';
import { failLogin, guardedCheck, issueSession, wrongCurrentPassword } from '../accounts/login.js';
import {
  clearMfa,
  confirmEnrollment,
  consumeChallenge,
  failChallenge,
  openChallenge,
  remainingRecoveryCodes,
  startEnrollment,
  useRecoveryCode,
  useTotp,
} from '../accounts/mfa.js';
import { getBranding, requireFeature } from '../accounts/settings.js';
import { refuseSelfReset, requireTarget } from '../accounts/users.js';
import { mfaThrottleKeys } from '../accounts/throttle.js';
import { requireInteractiveUser, requireUser } from '../auth/authenticate.js';
import { requirePermission } from '../auth/permissions.js';
import { verifyPassword } from '../auth/secrets.js';
import { findUserById } from '../store/users.js';

/** How recent an SSO-only account's sign-in must be to change its second factor. */
const SSO_REAUTH_MS = 10 * 60_000;

export async function mfaRoutes(app: FastifyInstance): Promise<void> {
  const ctx = app.kiln;
  const db = ctx.store.db;

  const me = async (id: string) => {
    const u = await findUserById(db, id);
    if (!u) throw new KilnError('UNAUTHORIZED', 'The account no longer exists.');
    return u;
  };

  /**
   * The second factor is changed only by the person: a signed-in session plus the current password.
   * An API key or a stolen session alone must never enrol, confirm or remove it.
   */
  /** `final` false: a code is checked next, so a right password must not forgive earlier wrong codes. */
  const proveOwner = async (request: FastifyRequest, reply: FastifyReply, final = true) => {
    const caller = requireInteractiveUser(request);
    const u = await me(caller.id);
    if (!u.password_hash) {
      // SSO-only accounts have no password: a sign-in at the IdP within the last minutes is their proof,
      // so a stolen older session cannot bind its own authenticator and lock the owner out.
      const s = caller.sessionId
        ? await db.selectFrom('sessions').select('created_at').where('id', '=', caller.sessionId).executeTakeFirst()
        : undefined;
      if (!s || Date.now() - Number(s.created_at) > SSO_REAUTH_MS)
        throw new KilnError('FORBIDDEN', 'This account signs in through single sign-on: sign in again, then retry within 10 minutes.', {
          reason: 'reauthentication-required',
        });
      return u;
    }
    const password = str(bodyObject(request.body ?? {}), 'password');
    // Counted like a login attempt: a stolen session cannot guess the password here without limit.
    await guardedCheck(
      ctx,
      request,
      reply,
      u.username,
      () => verifyPassword(password, u.password_hash),
      () => wrongCurrentPassword(ctx, request, reply, u.username, 'mfa: wrong current password'),
      final,
    );
    return u;
  };

  app.get('/api/auth/mfa', async (request) => {
    const u = await me(requireUser(request).id);
    const enabled = Number(u.mfa_enabled ?? 0) === 1;
    return {
      enabled,
      enrollmentPending: !enabled && !!u.mfa_pending_secret,
      recoveryCodesLeft: enabled ? await remainingRecoveryCodes(db, u.id) : 0,
    };
  });

  app.post('/api/auth/mfa/enroll', async (request, reply) => {
    await requireFeature(db, ctx.config, 'mfa');
    const u = await proveOwner(request, reply);
    const r = await startEnrollment(db, ctx.dataKey, u, (await getBranding(db)).productName);
    await auditFrom(request, 'mfa.enroll', u.username);
    return r;
  });

  app.post('/api/auth/mfa/verify', async (request) => {
    await requireFeature(db, ctx.config, 'mfa');
    // The password was checked at enroll; the code proves the authenticator. No API keys here either.
    const u = await me(requireInteractiveUser(request).id);
    const recoveryCodes = await confirmEnrollment(db, ctx.dataKey, u, str(bodyObject(request.body), 'code', 20));
    await auditFrom(request, 'mfa.enable', u.username);
    return { enabled: true, recoveryCodes };
  });

  app.post('/api/auth/mfa/complete', { config: { public: true } }, async (request, reply) => {
    const body = bodyObject(request.body);
    const challenge = await openChallenge(db, str(body, 'mfaToken', 200));
    const code = optStr(body, 'code', 20);
    const recoveryCode = optStr(body, 'recoveryCode', 40);
    if (!code === !recoveryCode)
      throw new KilnError('VALIDATION_ERROR', 'Send either code (the 6-digit TOTP code) or recoveryCode.', {
        details: [{ path: 'code', message: 'code or recoveryCode required' }],
      });
    const user = await findUserById(db, challenge.userId);
    if (!user) throw new KilnError('UNAUTHORIZED', 'The MFA challenge is unknown, used or expired. Log in again.');
    // Second-factor guesses count toward the same pair and address locks as password guesses (the
    // password step did not clear the count: only a completed sign-in does), and toward the account's
    // own second-factor lock over all addresses.
    const keys = mfaThrottleKeys(user.username, request.ip);
    await guardedCheck(
      ctx,
      request,
      reply,
      user.username,
      () => (code ? useTotp(db, ctx.dataKey, user, code) : useRecoveryCode(db, user.id, recoveryCode!)),
      async () => {
        await failChallenge(db, challenge.id);
        return failLogin(
          ctx,
          request,
          reply,
          user.username,
          code ? 'mfa-code' : 'mfa-recovery-code',
          'The code is wrong or was already used.',
          keys,
        );
      },
      true,
      keys,
    );
    if (!(await consumeChallenge(db, challenge.id)))
      throw new KilnError('UNAUTHORIZED', 'The MFA challenge is unknown, used or expired. Log in again.');
    if (recoveryCode)
      await audit(db, {
        event: 'mfa.recovery-code-used',
        actor: user,
        target: user.username,
        ip: request.ip,
        details: { left: await remainingRecoveryCodes(db, user.id) },
      });
    await audit(db, {
      event: 'login.success',
      actor: user,
      target: user.username,
      ip: request.ip,
      details: { method: code ? 'password+totp' : 'password+recovery-code' },
    });
    return issueSession(ctx, user);
  });

  app.post('/api/auth/mfa/disable', async (request, reply) => {
    const u0 = await me(requireInteractiveUser(request).id);
    if (Number(u0.mfa_enabled ?? 0) !== 1 && !u0.mfa_pending_secret) throw new KilnError('CONFLICT', 'MFA is not enabled.');
    // Removing the second factor takes both factors (NIST SP 800-63B: an authenticator is unbound at the
    // assurance level it gives): the password (when the account has one) and a current code or a recovery
    // code, so a stolen session plus a phished or reused password cannot remove it. A pending enrollment
    // (nothing enabled yet) is cancelled with the password alone.
    const body = bodyObject(request.body);
    const code = optStr(body, 'code', 20);
    const recoveryCode = optStr(body, 'recoveryCode', 40);
    const enabled = Number(u0.mfa_enabled ?? 0) === 1;
    if (enabled && !code === !recoveryCode)
      throw new KilnError('VALIDATION_ERROR', 'Send the current code (code) or a recovery code (recoveryCode) to switch MFA off.', {
        details: [{ path: 'code', message: 'code or recoveryCode required' }],
      });
    const u = await proveOwner(request, reply, !enabled);
    const keys = mfaThrottleKeys(u.username, request.ip);
    if (enabled)
      await guardedCheck(
        ctx,
        request,
        reply,
        u.username,
        () => (code ? useTotp(db, ctx.dataKey, u, code) : useRecoveryCode(db, u.id, recoveryCode!)),
        () =>
          wrongCurrentPassword(
            ctx,
            request,
            reply,
            u.username,
            'mfa/disable: wrong code',
            'The code is wrong or was already used.',
            'mfa-proof-invalid',
            keys,
          ),
        true,
        keys,
      );
    await clearMfa(db, u.id);
    await auditFrom(request, 'mfa.disable', u.username);
    return { enabled: false };
  });

  app.post('/api/auth/users/:id/mfa/reset', async (request) => {
    requirePermission(request, 'users:manage');
    const target = await requireTarget(db, requireUser(request), (request.params as { id: string }).id);
    refuseSelfReset(request.user!, target, 'POST /api/auth/mfa/disable (it asks for a code)');
    await clearMfa(db, target.id);
    await auditFrom(request, 'mfa.reset', target.username, { id: target.id });
    return { ok: true, enabled: false };
  });
}
