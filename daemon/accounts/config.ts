/** Environment settings of the accounts features (login protection, OIDC, SAML), read once at start. */
import { KilnError } from '../../src/core/errors.js';

export interface OidcConfig {
  issuer: string;
  clientId: string;
  clientSecret?: string;
  redirectUrl: string;
  scopes: string;
  adminGroup?: string;
  /** The claim holding group names. */
  groupsClaim: string;
}

export interface SamlConfig {
  entryPoint: string;
  issuer: string;
  idpCert: string;
  callbackUrl: string;
  adminGroup?: string;
  /** Attribute holding group names in the assertion. */
  groupsAttribute: string;
}

export interface AccountsConfig {
  /** Failures of one username before it is locked. Addresses get five times as many. */
  loginMaxFailures: number;
  loginLockMinutes: number;
  /** API_KEY_ROTATE_GRACE_S: how long a rotated-out secret keeps working (default 3600). */
  apiKeyRotateGraceS: number;
  /** API_KEY_CREATE_PER_HOUR: keys one account may create or rotate per hour (default 20). */
  apiKeyCreatePerHour: number;
  /** AUDIT_RETENTION_DAYS: audit events older than this are pruned by the upkeep sweep (default 365). */
  auditRetentionDays: number;
  /** THROTTLE_RETENTION_DAYS: login-throttle counters idle this long are pruned (default 2; never a live lock). */
  throttleRetentionDays: number;
  oidc?: OidcConfig;
  saml?: SamlConfig;
  /**
   * SSO_LINK_EXISTING: an SSO identity whose verified e-mail is an existing local username may be linked
   * to that user at its first sign-in. Never for admins or users with MFA (an admin links those by
   * removing the conflict); off by default, when such a sign-in is refused.
   */
  ssoLinkExisting: boolean;
  /** Where a browser is sent after SSO, with `#token=…` appended; unset → the callback answers JSON. */
  ssoSuccessRedirect?: string;
}

function positive(env: NodeJS.ProcessEnv, name: string, def: number, allowZero = false, max = Infinity): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return def;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0 || (n === 0 && !allowZero) || n > max)
    throw new KilnError(
      'USAGE_ERROR',
      `${name} must be a ${allowZero ? 'number ≥ 0' : 'positive number'}${max < Infinity ? ` ≤ ${max}` : ''} (got "${raw}").`,
    );
  return n;
}

/** A rotated-out secret's grace: at most 30 days (far beyond, its end is no valid date and rotation failed with 500). */
const MAX_ROTATE_GRACE_S = 30 * 86_400;

/**
 * A count of at least 1: 0.5 passed as positive and was floored to 0, and a limit of 0 refuses every
 * attempt (LOGIN_MAX_FAILURES: nobody could sign in any more; API_KEY_CREATE_PER_HOUR: no key be made).
 */
function count(env: NodeJS.ProcessEnv, name: string, def: number): number {
  const n = Math.floor(positive(env, name, def));
  if (n < 1) throw new KilnError('USAGE_ERROR', `${name} must be a whole number ≥ 1 (got "${env[name]}").`);
  return n;
}

function requireAll(env: NodeJS.ProcessEnv, names: string[], what: string): boolean {
  const set = names.filter((n) => env[n]);
  if (set.length === 0) return false;
  if (set.length < names.length) {
    throw new KilnError(
      'USAGE_ERROR',
      `${what} is half configured: set ${names.filter((n) => !env[n]).join(', ')} too (or unset ${set.join(', ')}).`,
    );
  }
  return true;
}

export function resolveAccountsConfig(env: NodeJS.ProcessEnv): AccountsConfig {
  const c: AccountsConfig = {
    loginMaxFailures: count(env, 'LOGIN_MAX_FAILURES', 10),
    loginLockMinutes: positive(env, 'LOGIN_LOCK_MINUTES', 15),
    apiKeyRotateGraceS: positive(env, 'API_KEY_ROTATE_GRACE_S', 3600, true, MAX_ROTATE_GRACE_S),
    apiKeyCreatePerHour: count(env, 'API_KEY_CREATE_PER_HOUR', 20),
    auditRetentionDays: positive(env, 'AUDIT_RETENTION_DAYS', 365),
    throttleRetentionDays: positive(env, 'THROTTLE_RETENTION_DAYS', 2),
    ssoSuccessRedirect: env.SSO_SUCCESS_REDIRECT || undefined,
    ssoLinkExisting: /^(true|1|yes|on)$/i.test(env.SSO_LINK_EXISTING?.trim() ?? ''),
  };
  if (requireAll(env, ['OIDC_ISSUER', 'OIDC_CLIENT_ID', 'OIDC_REDIRECT_URL'], 'OIDC')) {
    c.oidc = {
      issuer: env.OIDC_ISSUER!,
      clientId: env.OIDC_CLIENT_ID!,
      clientSecret: env.OIDC_CLIENT_SECRET || undefined,
      redirectUrl: env.OIDC_REDIRECT_URL!,
      scopes: env.OIDC_SCOPES || 'openid profile email',
      adminGroup: env.OIDC_ADMIN_GROUP || undefined,
      groupsClaim: env.OIDC_GROUPS_CLAIM || 'groups',
    };
  }
  if (requireAll(env, ['SAML_ENTRY_POINT', 'SAML_ISSUER', 'SAML_IDP_CERT', 'SAML_CALLBACK_URL'], 'SAML')) {
    c.saml = {
      entryPoint: env.SAML_ENTRY_POINT!,
      issuer: env.SAML_ISSUER!,
      idpCert: env.SAML_IDP_CERT!,
      callbackUrl: env.SAML_CALLBACK_URL!,
      adminGroup: env.SAML_ADMIN_GROUP || undefined,
      groupsAttribute: env.SAML_GROUPS_ATTRIBUTE || 'groups',
    };
  }
  return c;
}
