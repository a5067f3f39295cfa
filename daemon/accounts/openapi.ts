/** OpenAPI 3.1 paths of the accounts routes, merged into the daemon's document (daemon/openapi/document.ts). */
import { SETTINGS_PATCH_SCHEMA, SETTINGS_SCHEMA } from './settings.js';
type Json = Record<string, unknown>;

const obj = (properties: Json = {}, required?: string[]): Json => ({ type: 'object', properties, ...(required ? { required } : {}) });
const str = { type: 'string' };
const bool = { type: 'boolean' };
const err = (...codes: number[]) => Object.fromEntries(codes.map((c) => [String(c), { $ref: `#/components/responses/Error${c}` }]));
const ok = (schema: Json = obj(), description = 'OK') => ({ description, content: { 'application/json': { schema } } });
const body = (schema: Json) => ({ required: true, content: { 'application/json': { schema } } });
const pub = { security: [] as unknown[] };
const idParam = (name = 'id') => ({ name, in: 'path', required: true, schema: str });

const USER = obj({
  id: str,
  username: str,
  role: { type: 'string', enum: ['admin', 'user'] },
  team: { type: ['object', 'null'], properties: { id: str, name: str } },
  mfaEnabled: bool,
  sso: { type: ['string', 'null'] },
  service: { type: 'boolean', description: 'A service account: no password, no MFA, keys issued by an admin.' },
  disabled: { type: 'boolean', description: 'May not sign in; its keys answer 401 with reason owner-disabled.' },
  createdAt: str,
});
const CREATE_USER = (operationId: string, summary: string): Json =>
  op(
    operationId,
    'users',
    summary,
    {
      requestBody: body({
        ...obj({
          username: str,
          password: { type: 'string', description: 'Required for a person; not allowed for a service account.' },
          service: {
            type: 'boolean',
            description:
              'A service account (CI, scripts): no password, cannot sign in with one, no MFA. An admin issues its keys with POST /api/v1/api-keys and userId.',
          },
          role: { type: 'string', enum: ['admin', 'user'] },
          team: { type: ['string', 'null'] },
        }),
        required: ['username'],
        additionalProperties: false,
      }),
    },
    { '201': ok(obj({ user: USER }), 'Created') },
    [400, 401, 403, 404, 409],
  );
const SESSION = obj({ token: str, expiresAt: { type: 'string', format: 'date-time' }, user: obj({ id: str, username: str, role: str }) });
const TEAM = obj({ id: str, name: str, createdAt: str, members: { type: 'array', items: obj({ id: str, username: str }) } });
const SETTINGS = SETTINGS_SCHEMA;
const BRANDING = obj({
  productName: str,
  colors: obj({ primary: str, accent: str, background: str }),
  logoUrl: { type: ['string', 'null'] },
});

function op(operationId: string, tag: string, summary: string, extra: Json = {}, responses: Json = { '200': ok() }, errors = [401]): Json {
  return { operationId, tags: [tag], summary, ...extra, responses: { ...responses, ...err(...errors) } };
}

export const ACCOUNT_TAGS = ['users', 'mfa', 'sso', 'teams', 'settings'];

export function accountPaths(): Json {
  return {
    '/api/auth/change-password': {
      post: op(
        'changePassword',
        'auth',
        'Change your password (a session; API keys are refused): keeps this session, ends your other sessions and revokes all your API keys. A wrong current password counts towards the login lock (429 with Retry-After once locked).',
        { requestBody: body(obj({ currentPassword: str, newPassword: str }, ['currentPassword', 'newPassword'])) },
        { '200': ok(obj({ ok: bool, keptSession: bool })) },
        [400, 401, 403, 429],
      ),
    },
    '/api/auth/users': {
      get: op(
        'listUsers',
        'users',
        'All users (users:manage).',
        {},
        { '200': ok(obj({ users: { type: 'array', items: USER } })) },
        [401, 403],
      ),
      post: CREATE_USER('createUser', 'Create a user or service account (users:manage; no role above your own).'),
    },
    '/api/auth/register': {
      post: CREATE_USER(
        'registerUser',
        'Create a user or service account (users:manage; no role above your own). Same as POST /api/auth/users.',
      ),
    },
    '/api/auth/users/{id}': {
      put: op(
        'updateUser',
        'users',
        "Change a user's role, team or standing (users:manage; target authority; the last admin stays an enabled admin).",
        {
          parameters: [idParam()],
          requestBody: body({
            ...obj({
              role: { type: 'string', enum: ['admin', 'user'] },
              team: { type: ['string', 'null'] },
              disabled: {
                type: 'boolean',
                description:
                  'true: ends its sessions, refuses its sign-ins, and its API keys answer 401 owner-disabled; false: enables it again.',
              },
            }),
            additionalProperties: false,
          }),
        },
        { '200': ok(obj({ user: USER })) },
        [400, 401, 403, 404, 409],
      ),
      delete: op(
        'deleteUser',
        'users',
        'Delete a user with its sessions, API keys, jobs, library files, pipelines and watch folders (users:manage; target authority).',
        { parameters: [idParam()] },
        {
          '200': ok(
            obj({
              ok: bool,
              jobsDeleted: { type: 'integer' },
              filesDeleted: { type: 'integer' },
              pipelinesDeleted: { type: 'integer' },
              watchFoldersDeleted: { type: 'integer' },
            }),
          ),
        },
        [401, 403, 404, 409],
      ),
    },
    '/api/auth/users/{id}/reset-password': {
      post: op(
        'resetPassword',
        'users',
        "Set a person's password; its sessions and its own API keys end — never a service account's keys (users:manage; target authority). 409 for a service account, which has no password.",
        { parameters: [idParam()], requestBody: body(obj({ newPassword: str }, ['newPassword'])) },
        { '200': ok(obj({ ok: bool })) },
        [400, 401, 403, 404, 409],
      ),
    },
    '/api/auth/users/{id}/mfa/reset': {
      post: op(
        'resetMfa',
        'mfa',
        "Switch off a user's MFA (users:manage; target authority).",
        { parameters: [idParam()] },
        { '200': ok(obj({ ok: bool, enabled: bool })) },
        [401, 403, 404],
      ),
    },
    '/api/auth/mfa': {
      get: op(
        'mfaStatus',
        'mfa',
        'Your MFA state.',
        {},
        { '200': ok(obj({ enabled: bool, enrollmentPending: bool, recoveryCodesLeft: { type: 'integer' } })) },
      ),
    },
    '/api/auth/mfa/enroll': {
      post: op(
        'mfaEnroll',
        'mfa',
        'Start TOTP enrollment (needs the mfa feature): a signed-in session plus the current password (API keys are refused).',
        { requestBody: body(obj({ password: str }, ['password'])) },
        { '200': ok(obj({ secret: str, otpauthUri: str, qrCode: { type: 'string', description: 'PNG data URI' } })) },
        [400, 401, 403, 409, 429],
      ),
    },
    '/api/auth/mfa/verify': {
      post: op(
        'mfaVerify',
        'mfa',
        'Confirm enrollment with a TOTP code (a session, not an API key); returns 10 one-time recovery codes (shown once). A wrong code is 403 (reason mfa-code-invalid).',
        { requestBody: body(obj({ code: str }, ['code'])) },
        { '200': ok(obj({ enabled: bool, recoveryCodes: { type: 'array', items: str } })) },
        [400, 401, 403, 409],
      ),
    },
    '/api/auth/mfa/complete': {
      post: {
        ...pub,
        ...op(
          'mfaComplete',
          'mfa',
          'Finish a login that answered requiresMfa: the mfaToken plus a TOTP code or a recovery code.',
          { requestBody: body(obj({ mfaToken: str, code: str, recoveryCode: str }, ['mfaToken'])) },
          { '200': ok(SESSION) },
          [400, 401, 429],
        ),
      },
    },
    '/api/auth/mfa/disable': {
      post: op(
        'mfaDisable',
        'mfa',
        'Switch your MFA off: a session plus the current password (an SSO account: a sign-in within 10 minutes) and a current code or a recovery code (a pending enrollment: the password alone). API keys are refused.',
        { requestBody: body(obj({ password: str, code: str, recoveryCode: str })) },
        { '200': ok(obj({ enabled: bool })) },
        [400, 401, 403, 409, 429],
      ),
    },
    '/api/auth/oidc/login': {
      get: {
        ...pub,
        ...op(
          'oidcLogin',
          'sso',
          'Start OIDC sign-in: redirect to the provider (state, nonce, PKCE).',
          {},
          { '302': { description: 'Redirect to the provider' } },
          [403, 503],
        ),
      },
    },
    '/api/auth/oidc/callback': {
      get: {
        ...pub,
        ...op(
          'oidcCallback',
          'sso',
          'OIDC redirect target: signs the user in.',
          {
            parameters: [
              { name: 'code', in: 'query', schema: str },
              { name: 'state', in: 'query', schema: str },
            ],
          },
          { '200': ok(SESSION), '303': { description: 'Redirect to SSO_SUCCESS_REDIRECT with the token in the fragment' } },
          [400, 401, 403],
        ),
      },
    },
    '/api/auth/saml/metadata': {
      get: {
        ...pub,
        ...op(
          'samlMetadata',
          'sso',
          'SAML service-provider metadata.',
          {},
          { '200': { description: 'SP metadata', content: { 'application/samlmetadata+xml': { schema: str } } } },
          [403],
        ),
      },
    },
    '/api/auth/saml/login': {
      get: {
        ...pub,
        ...op(
          'samlLogin',
          'sso',
          'Start SAML sign-in: redirect with an AuthnRequest.',
          {},
          { '302': { description: 'Redirect to the IdP' } },
          [403],
        ),
      },
    },
    '/api/auth/saml/callback': {
      post: {
        ...pub,
        ...op(
          'samlCallback',
          'sso',
          'SAML assertion consumer service (form field SAMLResponse).',
          {
            requestBody: {
              required: true,
              content: { 'application/x-www-form-urlencoded': { schema: obj({ SAMLResponse: str, RelayState: str }, ['SAMLResponse']) } },
            },
          },
          { '200': ok(SESSION), '303': { description: 'Redirect to SSO_SUCCESS_REDIRECT' } },
          [400, 401, 403],
        ),
      },
    },
    '/api/v1/teams': {
      get: op(
        'listTeams',
        'teams',
        'Teams (members listed for admins).',
        {},
        { '200': ok(obj({ teams: { type: 'array', items: TEAM } })) },
      ),
      post: op(
        'createTeam',
        'teams',
        'Create a team (teams:manage).',
        { requestBody: body(obj({ name: str }, ['name'])) },
        { '201': ok(obj({ team: TEAM }), 'Created') },
        [400, 401, 403, 409],
      ),
    },
    '/api/v1/teams/{id}': {
      get: op(
        'getTeam',
        'teams',
        'One team with its members (teams:manage).',
        { parameters: [idParam()] },
        { '200': ok(obj({ team: TEAM })) },
        [401, 403, 404],
      ),
      put: op(
        'renameTeam',
        'teams',
        'Rename a team (teams:manage).',
        { parameters: [idParam()], requestBody: body(obj({ name: str }, ['name'])) },
        { '200': ok(obj({ team: TEAM })) },
        [400, 401, 403, 404, 409],
      ),
      delete: op(
        'deleteTeam',
        'teams',
        'Delete a team; its members stay without one (teams:manage).',
        { parameters: [idParam()] },
        { '200': ok(obj({ ok: bool })) },
        [401, 403, 404],
      ),
    },
    '/api/v1/settings': {
      get: op('getSettings', 'settings', 'The settings record.', {}, { '200': ok(obj({ settings: SETTINGS })) }),
      put: op(
        'updateSettings',
        'settings',
        'Change settings (settings:write; partial; a limit or TTL set to null goes back to its environment default). Limits apply without a restart, on every instance within 2 s; teams override them at /api/v1/teams/{id}/limits.',
        { requestBody: body(SETTINGS_PATCH_SCHEMA) },
        { '200': ok(obj({ settings: SETTINGS })) },
        [400, 401, 403],
      ),
    },
    '/api/v1/branding': {
      get: { ...pub, ...op('getBranding', 'settings', 'Branding for the UI.', {}, { '200': ok(obj({ branding: BRANDING })) }, []) },
      put: op(
        'updateBranding',
        'settings',
        'Change product name and colours (branding:write).',
        { requestBody: body(obj({ productName: str, colors: obj({ primary: str, accent: str, background: str }) })) },
        { '200': ok(obj({ branding: BRANDING })) },
        [400, 401, 403],
      ),
    },
    '/api/v1/branding/logo': {
      get: {
        ...pub,
        ...op(
          'getLogo',
          'settings',
          'The logo image.',
          {},
          { '200': { description: 'PNG, JPEG or WebP', content: { 'image/*': { schema: { type: 'string', format: 'binary' } } } } },
          [404],
        ),
      },
      post: op(
        'uploadLogo',
        'settings',
        'Upload the logo: PNG, JPEG or WebP, at most 512 KB (branding:write).',
        {
          requestBody: {
            required: true,
            content: { 'multipart/form-data': { schema: obj({ file: { type: 'string', format: 'binary' } }, ['file']) } },
          },
        },
        { '201': ok(obj({ branding: BRANDING }), 'Created') },
        [400, 401, 403, 413, 415],
      ),
      delete: op('deleteLogo', 'settings', 'Remove the logo (branding:write).', {}, { '200': ok(obj({ ok: bool })) }, [401, 403, 404]),
    },
    '/api/v1/admin/audit': {
      get: op(
        'listAudit',
        'settings',
        'Security events, newest first (audit:read).',
        {
          parameters: [
            { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 500 } },
            { name: 'before', in: 'query', schema: { type: 'string', format: 'date-time' } },
            { name: 'event', in: 'query', schema: str },
            { name: 'actor', in: 'query', schema: str },
          ],
        },
        {
          '200': ok(
            obj({
              events: {
                type: 'array',
                items: obj({
                  id: str,
                  at: str,
                  event: str,
                  actor: { type: ['object', 'null'] },
                  target: { type: ['string', 'null'] },
                  ip: { type: ['string', 'null'] },
                  details: { type: ['object', 'null'] },
                }),
              },
            }),
          ),
        },
        [400, 401, 403],
      ),
    },
  };
}
