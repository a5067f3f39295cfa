/**
 * OpenID Connect sign-in (authorization code flow with PKCE S256, state and nonce) through
 * openid-client. The provider's discovery document is fetched once and kept; a failed discovery is
 * retried on the next login. Plain-HTTP issuers are only accepted on loopback addresses (tests, local
 * IdPs).
 */
import type { Configuration } from 'openid-client';
import { KilnError } from '../../src/core/errors.js';
import type { OidcConfig } from './config.js';
import type { SsoIdentity } from './sso.js';

let cached: { key: string; config: Promise<Configuration> } | undefined;

function isLoopbackUrl(u: URL): boolean {
  return ['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname);
}

export async function oidcClient(c: OidcConfig): Promise<Configuration> {
  const key = `${c.issuer}|${c.clientId}`;
  if (cached?.key === key) return cached.config;
  const client = await import('openid-client');
  const issuer = new URL(c.issuer);
  const config = client
    .discovery(issuer, c.clientId, undefined, c.clientSecret ? client.ClientSecretBasic(c.clientSecret) : client.None(), {
      execute: issuer.protocol === 'http:' && isLoopbackUrl(issuer) ? [client.allowInsecureRequests] : [],
      timeout: 10,
    })
    .catch((e: unknown) => {
      cached = undefined;
      throw new KilnError(
        'UNAVAILABLE',
        `The OIDC provider ${c.issuer} could not be reached or described itself wrongly: ${(e as Error).message}`,
        { cause: e },
      );
    });
  cached = { key, config };
  return config;
}

export interface OidcPending {
  verifier: string;
  nonce: string;
}

export async function startOidc(c: OidcConfig): Promise<{ url: string; state: string; pending: OidcPending }> {
  const client = await import('openid-client');
  const config = await oidcClient(c);
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: c.redirectUrl,
    scope: c.scopes,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  return { url: url.href, state, pending: { verifier, nonce } };
}

function strings(v: unknown): string[] {
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string');
  return typeof v === 'string' ? [v] : [];
}

/** Exchanges the code and checks the ID token (signature, issuer, audience, expiry, nonce). */
export async function finishOidc(c: OidcConfig, query: string, state: string, pending: OidcPending): Promise<SsoIdentity> {
  const client = await import('openid-client');
  const config = await oidcClient(c);
  // The configured redirect URL, not the request's Host: behind a proxy only the former is what the provider saw.
  const current = new URL(c.redirectUrl);
  current.search = query;
  let tokens;
  try {
    tokens = await client.authorizationCodeGrant(config, current, {
      pkceCodeVerifier: pending.verifier,
      expectedState: state,
      expectedNonce: pending.nonce,
      idTokenExpected: true,
    });
  } catch (e) {
    throw new KilnError('UNAUTHORIZED', `OIDC sign-in failed: ${(e as Error).message}`, { reason: 'oidc-failed', cause: e });
  }
  const claims = tokens.claims()!;
  let info: Record<string, unknown> = {};
  if (tokens.access_token && config.serverMetadata().userinfo_endpoint) {
    info = (await client.fetchUserInfo(config, tokens.access_token, claims.sub).catch(() => ({}))) as Record<string, unknown>;
  }
  const all = { ...info, ...claims } as Record<string, unknown>;
  return {
    provider: 'oidc',
    // `sub` is unique only within its issuer (OIDC Core 2): bound to it, as SAML binds the NameID to the
    // IdP, so after a switch to another provider its users cannot sign in as the old one's.
    subject: `${claims.iss}!${claims.sub}`,
    legacySubject: claims.sub,
    username: typeof all.preferred_username === 'string' ? all.preferred_username : undefined,
    email: typeof all.email === 'string' ? all.email : undefined,
    emailVerified: all.email_verified === true,
    groups: [...new Set([...strings(info[c.groupsClaim]), ...strings(claims[c.groupsClaim])])],
  };
}
