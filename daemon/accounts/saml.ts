/**
 * SAML 2.0 sign-in as a service provider through @node-saml/node-saml: HTTP-Redirect AuthnRequest,
 * HTTP-POST response. Accepted only when the assertion is signed by SAML_IDP_CERT, its audience is
 * SAML_ISSUER, it is inside its time window (30 s clock skew), it answers a request this service
 * made (InResponseTo, each request id usable once: unsolicited IdP-initiated responses are refused),
 * that request was started by this browser (RelayState = the value of a cookie set at /login, bound
 * to the request id: a response obtained by someone else cannot sign a victim in, login CSRF), it is
 * addressed to SAML_CALLBACK_URL (the Response's Destination when present, the bearer confirmation's
 * Recipient always) and its assertion ID has not been seen before (replay). Request ids, bindings and
 * seen assertion ids live in the database, so a response can arrive at any instance.
 */
import { randomBytes } from 'node:crypto';
import { inflateRawSync } from 'node:zlib';
import type { CacheItem, CacheProvider, Profile, SAML } from '@node-saml/node-saml';
import type { Kysely } from 'kysely';
import { KilnError } from '../../src/core/errors.js';
import type { Database } from '../store/schema.js';
import type { SamlConfig } from './config.js';
import { putSsoRequest, takeSsoRequest, type SsoIdentity } from './sso.js';

const ASSERTION_NS = 'urn:oasis:names:tc:SAML:2.0:assertion';

const REQUEST_TTL_MS = 10 * 60_000;
const CLOCK_SKEW_MS = 30_000;

/** node-saml's request-id cache, kept in sso_requests. */
class DbCache implements CacheProvider {
  constructor(private readonly db: Kysely<Database>) {}
  async saveAsync(key: string, value: string): Promise<CacheItem | null> {
    await putSsoRequest(this.db, 'saml-req', key, value, REQUEST_TTL_MS);
    return { value, createdAt: Date.now() };
  }
  async getAsync(key: string): Promise<string | null> {
    const row = await this.db.selectFrom('sso_requests').selectAll().where('id', '=', `saml-req:${key}`).executeTakeFirst();
    return row && Number(row.expires_at) > Date.now() ? (JSON.parse(row.data) as string) : null;
  }
  async removeAsync(key: string | null): Promise<string | null> {
    if (key === null) return null;
    const r = await this.db.deleteFrom('sso_requests').where('id', '=', `saml-req:${key}`).executeTakeFirst();
    return Number(r.numDeletedRows) > 0 ? key : null;
  }
}

export function pemBody(cert: string): string {
  // Accept a PEM file's text or just its base64 body (what IdP metadata shows).
  return cert.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');
}

export async function samlFor(c: SamlConfig, db: Kysely<Database>): Promise<SAML> {
  const { SAML, ValidateInResponseTo } = await import('@node-saml/node-saml');
  return new SAML({
    entryPoint: c.entryPoint,
    issuer: c.issuer,
    audience: c.issuer,
    callbackUrl: c.callbackUrl,
    idpCert: pemBody(c.idpCert),
    wantAssertionsSigned: true,
    // Many IdPs sign only the assertion; a signed response is verified when present.
    wantAuthnResponseSigned: false,
    acceptedClockSkewMs: CLOCK_SKEW_MS,
    validateInResponseTo: ValidateInResponseTo.always,
    requestIdExpirationPeriodMs: REQUEST_TTL_MS,
    cacheProvider: new DbCache(db),
    identifierFormat: null,
    disableRequestedAuthnContext: true,
  });
}

function firstString(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (Array.isArray(v) && typeof v[0] === 'string') return v[0];
  return undefined;
}

function assertionId(profile: Profile): string | undefined {
  const a = profile.getAssertion?.() as { Assertion?: { $?: { ID?: string } } } | undefined;
  return a?.Assertion?.$?.ID;
}

function notOnOrAfter(profile: Profile): number {
  const m = /NotOnOrAfter="([^"]+)"/.exec(profile.getAssertionXml?.() ?? '');
  const t = m ? Date.parse(m[1]!) : NaN;
  return Number.isFinite(t) ? t + CLOCK_SKEW_MS : Date.now() + REQUEST_TTL_MS;
}

const refused = (why: string, reason = 'saml-invalid') => new KilnError('UNAUTHORIZED', `SAML sign-in refused: ${why}`, { reason });

/**
 * Starts a sign-in: the IdP URL with an AuthnRequest, and the browser binding (the RelayState, also
 * set as a cookie by the route), stored with the request's id.
 */
export async function startSaml(c: SamlConfig, db: Kysely<Database>): Promise<{ url: string; binding: string }> {
  const saml = await samlFor(c, db);
  const binding = randomBytes(24).toString('base64url');
  const url = await saml.getAuthorizeUrlAsync(binding, undefined, {});
  // Our own AuthnRequest, deflated into the redirect: its ID is what the answer's InResponseTo must name.
  const xml = inflateRawSync(Buffer.from(new URL(url).searchParams.get('SAMLRequest') ?? '', 'base64')).toString();
  const requestId = /\sID="([^"]+)"/.exec(xml)?.[1];
  if (!requestId) throw new KilnError('INTERNAL', 'The SAML library made an AuthnRequest without an ID.');
  await putSsoRequest(db, 'saml-bind', binding, { requestId }, REQUEST_TTL_MS);
  return { url, binding };
}

/** The request id a browser's binding stands for (single use), or a refusal naming the mix-up. */
export async function takeBinding(db: Kysely<Database>, relayState: unknown, cookieValue: string | undefined): Promise<string> {
  if (typeof relayState !== 'string' || !relayState || relayState !== cookieValue)
    throw refused(
      'the sign-in was started in another browser, or has expired: start again at /api/auth/saml/login.',
      'saml-state-mismatch',
    );
  const bound = await takeSsoRequest<{ requestId: string }>(db, 'saml-bind', relayState);
  if (!bound) throw refused('unknown, used or expired sign-in: start again at /api/auth/saml/login.', 'saml-state-mismatch');
  return bound.requestId;
}

/** Destination (when the Response carries one) and every bearer Recipient must be this service's callback. */
async function checkAddressing(c: SamlConfig, samlResponse: string, profile: Profile): Promise<void> {
  const { DOMParser } = await import('@xmldom/xmldom');
  const response = new DOMParser().parseFromString(Buffer.from(samlResponse, 'base64').toString('utf8'), 'text/xml');
  const destination = response.documentElement?.getAttribute('Destination');
  if (destination && destination !== c.callbackUrl) throw refused(`the response is addressed to ${destination}, not to this service.`);
  // The Recipient is read from the assertion node-saml verified, not from the unsigned envelope.
  const assertion = new DOMParser().parseFromString(profile.getAssertionXml?.() ?? '', 'text/xml');
  const confirmations = Array.from(assertion.getElementsByTagNameNS(ASSERTION_NS, 'SubjectConfirmationData'));
  const recipients = confirmations.map((e) => e.getAttribute('Recipient') ?? '');
  if (!recipients.length || recipients.some((r) => r !== c.callbackUrl))
    throw refused(`the assertion is for ${recipients.find((r) => r !== c.callbackUrl) || 'no recipient'}, not for this service.`);
}

export async function finishSaml(c: SamlConfig, db: Kysely<Database>, samlResponse: string, requestId: string): Promise<SsoIdentity> {
  const saml = await samlFor(c, db);
  let profile: Profile | null;
  try {
    ({ profile } = await saml.validatePostResponseAsync({ SAMLResponse: samlResponse }));
  } catch (e) {
    throw new KilnError('UNAUTHORIZED', `SAML sign-in refused: ${(e as Error).message}`, { reason: 'saml-invalid', cause: e });
  }
  if (!profile?.nameID)
    throw new KilnError('UNAUTHORIZED', 'SAML sign-in refused: the assertion names no subject.', { reason: 'saml-invalid' });
  // node-saml checked that some request of ours is answered; it must be the one this browser started.
  if (profile.inResponseTo !== requestId)
    throw refused('the response answers a sign-in started elsewhere (InResponseTo), not this browser’s.', 'saml-state-mismatch');
  await checkAddressing(c, samlResponse, profile);
  const id = assertionId(profile);
  if (!id) throw new KilnError('UNAUTHORIZED', 'SAML sign-in refused: the assertion has no ID.', { reason: 'saml-invalid' });
  // Each assertion is accepted once until it expires, whatever request it answers.
  try {
    await db
      .insertInto('sso_requests')
      .values({ id: `saml-seen:${id}`, kind: 'saml-seen', data: '""', expires_at: notOnOrAfter(profile) })
      .execute();
  } catch {
    throw new KilnError('UNAUTHORIZED', 'SAML sign-in refused: this assertion was already used (replay).', { reason: 'saml-replay' });
  }
  const attrs = (profile.attributes ?? {}) as Record<string, unknown>;
  const groupsRaw = attrs[c.groupsAttribute] ?? (profile as Record<string, unknown>)[c.groupsAttribute];
  const groups = (Array.isArray(groupsRaw) ? groupsRaw : groupsRaw === undefined ? [] : [groupsRaw]).filter(
    (g): g is string => typeof g === 'string',
  );
  const email =
    firstString(attrs.email) ??
    firstString(profile.email) ??
    (/emailAddress$/.test(profile.nameIDFormat ?? '') ? profile.nameID : undefined);
  return {
    provider: 'saml',
    subject: `${profile.issuer ?? ''}!${profile.nameID}`,
    username: firstString(attrs.username) ?? profile.nameID,
    email,
    // The IdP is trusted by configuration (its certificate); its e-mail statements are taken as verified.
    emailVerified: !!email,
    groups,
  };
}
