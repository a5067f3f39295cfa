/**
 * SAML round trip: the SP-initiated AuthnRequest from /login, a response signed here with an IdP key
 * and certificate made by node-forge and xml-crypto, and the refusals: unsigned, tampered, signed by
 * another key, expired, wrong audience, unsolicited, replayed, posted by another browser (login CSRF),
 * addressed to another service provider; and the second factor asked of a SAML user with TOTP.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { inflateRawSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import forge from 'node-forge';
import { SignedXml } from 'xml-crypto';
import { resolveAccountsConfig } from '../../../daemon/accounts/config.js';
import { startServer, type TestServer } from '../../helpers/server.js';
import { call, STRONG } from './http.js';

const IDP = 'https://idp.example.test/metadata';
const SP = 'kiln-sp';

function makeIdpKey(): { key: string; cert: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey);
  cert.serialNumber = '01';
  cert.validity.notBefore = new Date(Date.now() - 86_400_000);
  cert.validity.notAfter = new Date(Date.now() + 86_400_000);
  const name = [{ name: 'commonName', value: 'test idp' }];
  cert.setSubject(name);
  cert.setIssuer(name);
  cert.sign(forge.pki.privateKeyFromPem(privateKey), forge.md.sha256.create());
  return { key: privateKey, cert: forge.pki.certificateToPem(cert) };
}

const iso = (ms: number) => new Date(ms).toISOString();

function responseXml(o: {
  inResponseTo?: string;
  nameId: string;
  groups?: string[];
  audience?: string;
  notOnOrAfter?: number;
  callback: string;
  assertionId?: string;
}): string {
  const now = Date.now();
  const end = o.notOnOrAfter ?? now + 5 * 60_000;
  const irt = o.inResponseTo ? ` InResponseTo="${o.inResponseTo}"` : '';
  const groups = (o.groups ?? []).map((g) => `<saml:AttributeValue>${g}</saml:AttributeValue>`).join('');
  return (
    `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_r${randomBytes(8).toString('hex')}" Version="2.0" IssueInstant="${iso(now)}" Destination="${o.callback}"${irt}>` +
    `<saml:Issuer>${IDP}</saml:Issuer><samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>` +
    `<saml:Assertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${o.assertionId ?? '_a' + randomBytes(8).toString('hex')}" Version="2.0" IssueInstant="${iso(now)}">` +
    `<saml:Issuer>${IDP}</saml:Issuer>` +
    `<saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress">${o.nameId}</saml:NameID>` +
    `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData${irt} NotOnOrAfter="${iso(end)}" Recipient="${o.callback}"/></saml:SubjectConfirmation></saml:Subject>` +
    `<saml:Conditions NotBefore="${iso(now - 60_000)}" NotOnOrAfter="${iso(end)}"><saml:AudienceRestriction><saml:Audience>${o.audience ?? SP}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
    `<saml:AuthnStatement AuthnInstant="${iso(now)}" SessionIndex="_s1"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>` +
    `<saml:AttributeStatement><saml:Attribute Name="groups">${groups}</saml:Attribute></saml:AttributeStatement>` +
    `</saml:Assertion></samlp:Response>`
  );
}

function signAssertion(xml: string, idp: { key: string; cert: string }): string {
  const sig = new SignedXml({
    privateKey: idp.key,
    publicCert: idp.cert,
    signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#',
  });
  sig.addReference({
    xpath: "//*[local-name(.)='Assertion']",
    transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', 'http://www.w3.org/2001/10/xml-exc-c14n#'],
    digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
  });
  sig.computeSignature(xml, { location: { reference: "//*[local-name(.)='Assertion']/*[local-name(.)='Issuer']", action: 'after' } });
  return sig.getSignedXml();
}

describe('SAML sign-in', () => {
  let s: TestServer;
  let idp: { key: string; cert: string };
  let callback: string;

  before(async () => {
    idp = makeIdpKey();
    s = await startServer();
    callback = `${s.url}/api/auth/saml/callback`;
    // The daemon's port is only known once it listens: resolve the SAML variables now.
    s.config.accounts = resolveAccountsConfig({
      // Many refused responses come from one address here: room for them before the SSO lock (oidc.test checks it).
      LOGIN_MAX_FAILURES: '50',
      SAML_ENTRY_POINT: 'https://idp.example.test/sso',
      SAML_ISSUER: SP,
      SAML_IDP_CERT: idp.cert,
      SAML_CALLBACK_URL: callback,
      SAML_ADMIN_GROUP: 'kiln-admins',
    });
  });
  after(() => s.close());

  /** The browser side of each started login: the RelayState the IdP echoes and the cookie /login set. */
  const flows = new Map<string, { relay: string; cookie: string }>();
  let lastFlow: { relay: string; cookie: string } | undefined;

  /** Starts an SP-initiated login (as a browser) and returns the AuthnRequest's ID. */
  async function requestId(): Promise<string> {
    const r = await call(s, 'GET', '/api/auth/saml/login', { token: null });
    assert.equal(r.status, 302);
    const loc = new URL(r.headers.get('location')!);
    assert.equal(loc.origin + loc.pathname, 'https://idp.example.test/sso');
    const xml = inflateRawSync(Buffer.from(loc.searchParams.get('SAMLRequest')!, 'base64')).toString();
    assert.match(xml, /AuthnRequest/);
    assert.match(xml, new RegExp(`AssertionConsumerServiceURL="${callback}"`));
    const id = /ID="([^"]+)"/.exec(xml)![1]!;
    const cookie = /kiln_saml_state=([^;]+)/.exec(r.headers.get('set-cookie') ?? '')![1]!;
    lastFlow = { relay: loc.searchParams.get('RelayState')!, cookie };
    assert.equal(lastFlow.relay, cookie, 'the RelayState is the cookie value');
    flows.set(id, lastFlow);
    return id;
  }

  /** Posts a response from the browser that started its request (or as told). */
  const post = (xml: string, as?: { relay?: string; cookie?: string }) => {
    const flow = flows.get(/InResponseTo="([^"]+)"/.exec(xml)?.[1] ?? '') ?? lastFlow!;
    const { relay, cookie } = { ...flow, ...as };
    return fetch(callback, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie: `kiln_saml_state=${cookie}` } : {}) },
      body: new URLSearchParams({ SAMLResponse: Buffer.from(xml).toString('base64'), ...(relay ? { RelayState: relay } : {}) }),
    }).then(async (r) => ({ status: r.status, json: await r.json() }));
  };

  it('serves SP metadata naming the entity and the assertion consumer service', async () => {
    const r = await call(s, 'GET', '/api/auth/saml/metadata', { token: null });
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type')!, /samlmetadata\+xml/);
    assert.match(r.json, new RegExp(`entityID="${SP}"`));
    assert.match(r.json, new RegExp(`Location="${callback}"`));
  });

  it('accepts a signed response to its request: creates the user (admin by group), and refuses a replay', async () => {
    const id = await requestId();
    const signed = signAssertion(
      responseXml({ inResponseTo: id, nameId: 'sam@example.test', groups: ['staff', 'kiln-admins'], callback }),
      idp,
    );
    const r = await post(signed);
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.equal(r.json.user.username, 'sam@example.test');
    assert.equal(r.json.user.role, 'admin');
    assert.equal(r.json.created, true);
    assert.equal((await call(s, 'GET', '/api/auth/session', { token: r.json.token })).json.user.username, 'sam@example.test');

    const replay = await post(signed);
    assert.equal(replay.status, 401);
    assert.equal(replay.json.token, undefined);

    // Same assertion ID answering a fresh request: still a replay.
    const id2 = await requestId();
    const sameAssertion = signAssertion(
      responseXml({
        inResponseTo: id2,
        nameId: 'sam@example.test',
        callback,
        assertionId: /<saml:Assertion[^>]* ID="([^"]+)"/.exec(signed)![1],
      }),
      idp,
    );
    const r2 = await post(sameAssertion);
    assert.equal(r2.status, 401);
    assert.equal(r2.json.error.reason, 'saml-replay');

    const id3 = await requestId();
    const again = await post(signAssertion(responseXml({ inResponseTo: id3, nameId: 'sam@example.test', callback }), idp));
    assert.equal(again.status, 200);
    assert.equal(again.json.created, false);
    assert.equal(again.json.user.id, r.json.user.id);
  });

  it('never links an assertion to an existing local admin, even with SSO_LINK_EXISTING', async () => {
    const admin = await call(s, 'POST', '/api/auth/register', {
      body: { username: 'chief@example.test', password: STRONG, role: 'admin' },
    });
    assert.equal(admin.status, 201, JSON.stringify(admin.json));
    for (const link of [false, true]) {
      s.config.accounts.ssoLinkExisting = link;
      try {
        const r = await post(signAssertion(responseXml({ inResponseTo: await requestId(), nameId: 'chief@example.test', callback }), idp));
        assert.equal(r.status, 403, `link=${link}: ${JSON.stringify(r.json)}`);
        assert.equal(r.json.error.reason, 'sso-link-refused');
        assert.equal(r.json.token, undefined);
      } finally {
        s.config.accounts.ssoLinkExisting = false;
      }
    }
    const users = (await call(s, 'GET', '/api/auth/users')).json.users as { username: string; sso?: string }[];
    assert.ok(!users.find((u) => u.username === 'chief@example.test')!.sso, 'the admin stays unlinked');
  });

  it("new SSO users get the settings' default role", async () => {
    assert.equal((await call(s, 'PUT', '/api/v1/settings', { body: { ssoDefaultRole: 'admin' } })).status, 200);
    try {
      const r = await post(signAssertion(responseXml({ inResponseTo: await requestId(), nameId: 'dora@example.test', callback }), idp));
      assert.equal(r.status, 200, JSON.stringify(r.json));
      assert.equal(r.json.user.role, 'admin');
    } finally {
      await call(s, 'PUT', '/api/v1/settings', { body: { ssoDefaultRole: 'user' } });
    }
    const plain = await post(signAssertion(responseXml({ inResponseTo: await requestId(), nameId: 'ed@example.test', callback }), idp));
    assert.equal(plain.json.user.role, 'user');
  });

  it('with SSO_SUCCESS_REDIRECT, the browser is sent on with the token in the URL fragment', async () => {
    s.config.accounts.ssoSuccessRedirect = 'https://app.example.test/';
    try {
      const xml = signAssertion(responseXml({ inResponseTo: await requestId(), nameId: 'fay@example.test', callback }), idp);
      const res = await fetch(callback, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `kiln_saml_state=${lastFlow!.cookie}` },
        body: new URLSearchParams({ SAMLResponse: Buffer.from(xml).toString('base64'), RelayState: lastFlow!.relay }),
      });
      assert.equal(res.status, 303);
      const loc = new URL(res.headers.get('location')!);
      assert.equal(loc.origin + loc.pathname + loc.search, 'https://app.example.test/');
      const token = new URLSearchParams(loc.hash.slice(1)).get('token')!;
      assert.equal((await call(s, 'GET', '/api/auth/session', { token })).json.user.username, 'fay@example.test');
    } finally {
      s.config.accounts.ssoSuccessRedirect = undefined;
    }
  });

  it('refuses unsigned, tampered, foreign-signed, expired, wrong-audience and unsolicited responses', async () => {
    const cases: [string, (id: string) => string][] = [
      ['unsigned', (id) => responseXml({ inResponseTo: id, nameId: 'eve@example.test', callback })],
      [
        'tampered',
        (id) =>
          signAssertion(responseXml({ inResponseTo: id, nameId: 'eve@example.test', callback }), idp).replace(
            'eve@example.test',
            'sam@example.test',
          ),
      ],
      [
        'tampered groups',
        (id) =>
          signAssertion(responseXml({ inResponseTo: id, nameId: 'eve@example.test', groups: ['staff'], callback }), idp).replace(
            '>staff<',
            '>kiln-admins<',
          ),
      ],
      ['other key', (id) => signAssertion(responseXml({ inResponseTo: id, nameId: 'eve@example.test', callback }), makeIdpKey())],
      [
        'expired',
        (id) =>
          signAssertion(
            responseXml({ inResponseTo: id, nameId: 'eve@example.test', callback, notOnOrAfter: Date.now() - 5 * 60_000 }),
            idp,
          ),
      ],
      [
        'audience',
        (id) => signAssertion(responseXml({ inResponseTo: id, nameId: 'eve@example.test', callback, audience: 'someone-else' }), idp),
      ],
      ['unsolicited', () => signAssertion(responseXml({ nameId: 'eve@example.test', callback }), idp)],
      ['unknown request', () => signAssertion(responseXml({ inResponseTo: '_never-issued', nameId: 'eve@example.test', callback }), idp)],
    ];
    for (const [what, make] of cases) {
      const r = await post(make(await requestId()));
      assert.equal(r.status, 401, `${what}: ${JSON.stringify(r.json)}`);
      assert.equal(r.json.error.reason, 'saml-invalid', what);
      assert.equal(r.json.token, undefined);
    }
    const users = (await call(s, 'GET', '/api/auth/users')).json.users;
    assert.ok(!users.some((u: { username: string }) => u.username === 'eve@example.test'));
    await requestId();
    const bad = await fetch(callback, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'SAMLResponse=',
    });
    assert.equal(bad.status, 400);
  });

  it("binds the flow to the browser: a response for someone else's request, or without the cookie, signs nobody in (login CSRF)", async () => {
    // The attacker starts a sign-in in their own browser and gets a valid signed response for it.
    const attackerRequest = await requestId();
    const attackerFlow = lastFlow!;
    const forged = signAssertion(responseXml({ inResponseTo: attackerRequest, nameId: 'mallory@example.test', callback }), idp);
    // The victim's browser is made to post it: it carries its own cookie (or none), never the attacker's.
    await requestId();
    const victimFlow = lastFlow!;
    const withVictimCookie = await post(forged, { relay: attackerFlow.relay, cookie: victimFlow.cookie });
    assert.equal(withVictimCookie.status, 401, JSON.stringify(withVictimCookie.json));
    assert.equal(withVictimCookie.json.error.reason, 'saml-state-mismatch');
    const noCookie = await post(forged, { relay: attackerFlow.relay, cookie: '' });
    assert.equal(noCookie.status, 401);
    assert.equal(noCookie.json.error.reason, 'saml-state-mismatch');
    // Even with the victim's own RelayState and cookie, a response to another request is refused (InResponseTo).
    const crossed = await post(forged, victimFlow);
    assert.equal(crossed.status, 401, JSON.stringify(crossed.json));
    assert.equal(crossed.json.error.reason, 'saml-state-mismatch');
    assert.equal(crossed.json.token, undefined);
  });

  it('refuses a response addressed to another service provider (Destination, Recipient)', async () => {
    const other = 'https://other-sp.example.test/saml/acs';
    const id = await requestId();
    const wrongDestination = signAssertion(responseXml({ inResponseTo: id, nameId: 'gus@example.test', callback }), idp).replace(
      `Destination="${callback}"`,
      `Destination="${other}"`,
    );
    const d = await post(wrongDestination);
    assert.equal(d.status, 401, JSON.stringify(d.json));
    assert.match(d.json.error.message, /other-sp/);
    const id2 = await requestId();
    const wrongRecipient = signAssertion(
      responseXml({ inResponseTo: id2, nameId: 'gus@example.test', callback }).replace(`Recipient="${callback}"`, `Recipient="${other}"`),
      idp,
    );
    const r = await post(wrongRecipient);
    assert.equal(r.status, 401, JSON.stringify(r.json));
    assert.equal(r.json.error.reason, 'saml-invalid');
    assert.match(r.json.error.message, /other-sp/);
    const users = (await call(s, 'GET', '/api/auth/users')).json.users;
    assert.ok(!users.some((u: { username: string }) => u.username === 'gus@example.test'));
  });

  it('a SAML user with TOTP is asked for the second factor: no session from the assertion alone', async () => {
    const first = await post(signAssertion(responseXml({ inResponseTo: await requestId(), nameId: 'hal@example.test', callback }), idp));
    assert.equal(first.status, 200);
    const token = first.json.token;
    // An SSO-only account has no password: its session is the proof for enrolment.
    const e = await call(s, 'POST', '/api/auth/mfa/enroll', { token, body: {} });
    assert.equal(e.status, 200, JSON.stringify(e.json));
    const { Secret, TOTP } = await import('otpauth');
    const totp = new TOTP({ secret: Secret.fromBase32(e.json.secret), digits: 6, period: 30, algorithm: 'SHA1' });
    const v = await call(s, 'POST', '/api/auth/mfa/verify', { token, body: { code: totp.generate({ timestamp: Date.now() - 30_000 }) } });
    assert.equal(v.status, 200, JSON.stringify(v.json));
    const again = await post(signAssertion(responseXml({ inResponseTo: await requestId(), nameId: 'hal@example.test', callback }), idp));
    assert.equal(again.status, 200);
    assert.equal(again.json.token, undefined);
    assert.equal(again.json.requiresMfa, true);
    const done = await call(s, 'POST', '/api/auth/mfa/complete', {
      token: null,
      body: { mfaToken: again.json.mfaToken, code: totp.generate() },
    });
    assert.equal(done.status, 200, JSON.stringify(done.json));
    assert.ok(done.json.token);
  });
});
