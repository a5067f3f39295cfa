/** Login, logout, session check, the auth configuration, and API keys. */
import type { FastifyInstance } from 'fastify';
import { KilnError } from '../../src/core/errors.js';
import { requireUser } from '../auth/authenticate.js';
import { hasPermission } from '../auth/permissions.js';
import { auditFrom } from '../accounts/audit.js';
import { bodyObject, label, onlyFields } from '../accounts/body.js';
import { issueKey, keyInReach, keyViews, rotateKey } from '../accounts/keys.js';
import { passwordLogin } from '../accounts/login.js';
import { pruneAccounts } from '../accounts/retention.js';
import { rateLimit } from '../accounts/throttle.js';
import { listApiKeys, revokeApiKey } from '../store/api-keys.js';
import { alsoOnSessionSweep, deleteSession, deleteUserSessions } from '../store/sessions.js';
import { errorResponses, json, okBody, pub, ref } from '../openapi/common.js';
import type { RouteDoc } from '../openapi/route-doc.js';

function stringField(body: unknown, name: string, max = 1000): string {
  const v = (body as Record<string, unknown> | null | undefined)?.[name];
  if (typeof v !== 'string' || v.length === 0)
    throw new KilnError('VALIDATION_ERROR', `${name} is required (a string).`, { details: [{ path: name, message: 'required' }] });
  if (v.length > max)
    throw new KilnError('VALIDATION_ERROR', `${name} is longer than ${max} characters.`, {
      details: [{ path: name, message: 'too long' }],
    });
  return v;
}

export async function authRoutes(app: FastifyInstance): Promise<void> {
  const { store, config, auth } = app.kiln;
  // Audit and throttle retention rides on the job sweeper's session sweep.
  alsoOnSessionSweep(store.db, (now) => pruneAccounts(store.db, config.accounts, config.sharedDir, now));

  app.post('/api/auth/login', { config: { public: true }, schema: LOGIN_DOC }, async (request, reply) => {
    const username = stringField(request.body, 'username', 200);
    const password = stringField(request.body, 'password');
    // Login protection, MFA challenge and audit: daemon/accounts/login.ts.
    return passwordLogin(app.kiln, request, reply, username, password);
  });

  app.post('/api/auth/logout', { schema: LOGOUT_DOC }, async (request) => {
    const user = requireUser(request);
    // An API key has no session: "ok" would tell a script its key is done with while it stays valid (and
    // write a logout that did not happen into the audit log).
    if (user.via === 'api-key')
      throw new KilnError('CONFLICT', 'An API key has no session to end: revoke the key with DELETE /api/v1/api-keys/:id.', {
        reason: 'api-key-no-session',
      });
    const body = bodyObject(request.body);
    onlyFields(body, ['everywhere'], 'logout');
    if (body.everywhere !== undefined && typeof body.everywhere !== 'boolean')
      throw new KilnError('VALIDATION_ERROR', 'everywhere must be true or false.', {
        details: [{ path: 'everywhere', message: 'invalid' }],
      });
    // Everywhere: the way to end a session left open elsewhere without changing the password, and the
    // only way for an SSO account, which has none to change.
    if (body.everywhere) {
      const sessionsEnded = await deleteUserSessions(store.db, user.id);
      await auditFrom(request, 'logout', null, { everywhere: true, sessionsEnded });
      return { ok: true, sessionsEnded };
    }
    if (user.sessionId) await deleteSession(store.db, user.sessionId);
    await auditFrom(request, 'logout');
    return { ok: true };
  });

  app.get('/api/auth/session', { schema: SESSION_DOC }, async (request) => {
    const u = requireUser(request);
    return { user: { id: u.id, username: u.username, role: u.role, teamId: u.teamId }, via: u.via };
  });

  app.get('/api/v1/config/auth', { config: { public: true }, schema: AUTH_CONFIG_DOC }, async () => ({ authEnabled: config.authEnabled }));

  app.post('/api/v1/api-keys', { schema: CREATE_KEY_DOC }, async (request, reply) => {
    const user = requireUser(request);
    const name = label(bodyObject(request.body), 'name', 200);
    // Counted per caller before any work: a stolen credential cannot mint keys by the thousand.
    await rateLimit(store, `key-create:${user.id}`, config.accounts.apiKeyCreatePerHour, 3_600_000, 'API keys created', reply);
    const created = await issueKey(store.db, user, bodyObject(request.body), name);
    await auditFrom(request, 'key.create', created.id, { name, expiresAt: created.expiresAt, owner: created.owner });
    return reply.code(201).send(created);
  });

  app.post('/api/v1/api-keys/:id/rotate', { schema: ROTATE_KEY_DOC }, async (request, reply) => {
    const user = requireUser(request);
    const { id } = request.params as { id: string };
    await rateLimit(store, `key-create:${user.id}`, config.accounts.apiKeyCreatePerHour, 3_600_000, 'API keys created', reply);
    const rotated = await rotateKey(store.db, user, id, config.accounts.apiKeyRotateGraceS * 1000);
    await auditFrom(request, 'key.rotate', id, { previousKeyValidUntil: rotated.previousKeyValidUntil });
    return rotated;
  });

  app.get('/api/v1/api-keys', { schema: LIST_KEYS_DOC }, async (request) => {
    const user = requireUser(request);
    const all = (request.query as { all?: string }).all === 'true' && hasPermission(request, 'keys:all');
    return { keys: await keyViews(store.db, await listApiKeys(store.db, all ? undefined : user.id), all) };
  });

  app.delete('/api/v1/api-keys/:id', { schema: DELETE_KEY_DOC }, async (request) => {
    const user = requireUser(request);
    const { id } = request.params as { id: string };
    await keyInReach(store.db, user, id);
    if (!(await revokeApiKey(store.db, id))) throw new KilnError('NOT_FOUND', `No API key ${id}.`);
    auth.forgetApiKey(id);
    await auditFrom(request, 'key.revoke', id);
    return { ok: true };
  });
}

const LOGIN_DOC: RouteDoc = {
  ...pub,
  operationId: 'login',
  tags: ['auth'],
  summary: 'Log in and get a session token.',
  requestBody: {
    required: true,
    content: {
      'application/json': {
        schema: {
          type: 'object',
          required: ['username', 'password'],
          properties: { username: { type: 'string' }, password: { type: 'string' } },
        },
      },
    },
  },
  response: {
    '200': json(
      {
        oneOf: [
          {
            type: 'object',
            required: ['token', 'expiresAt', 'user'],
            properties: { token: { type: 'string' }, expiresAt: { type: 'string', format: 'date-time' }, user: ref('User') },
          },
          {
            type: 'object',
            required: ['requiresMfa', 'mfaToken'],
            properties: {
              requiresMfa: { const: true },
              mfaToken: { type: 'string', description: 'Send it with a code to POST /api/auth/mfa/complete.' },
            },
          },
        ],
      },
      'A session, or (MFA enabled) a challenge to complete.',
    ),
    ...errorResponses([400, 401, 429]),
  },
};

const LOGOUT_DOC: RouteDoc = {
  operationId: 'logout',
  tags: ['auth'],
  summary:
    'End the current session, or with {"everywhere": true} every session of the account (an API key, which has none, gets 409: revoke it instead).',
  requestBody: {
    required: false,
    content: {
      'application/json': {
        schema: {
          type: 'object',
          additionalProperties: false,
          properties: {
            everywhere: {
              type: 'boolean',
              description:
                'End every session of the account, this one included, and its sign-ins waiting for a second factor. API keys stay.',
            },
          },
        },
      },
    },
  },
  response: {
    '200': json({
      type: 'object',
      required: ['ok'],
      properties: { ok: { const: true }, sessionsEnded: { type: 'integer', description: 'With everywhere: how many sessions ended.' } },
    }),
    ...errorResponses([400, 401, 409]),
  },
};

const SESSION_DOC: RouteDoc = {
  operationId: 'session',
  tags: ['auth'],
  summary: 'Who is signed in.',
  response: {
    '200': json({
      type: 'object',
      required: ['user', 'via'],
      properties: { user: ref('User'), via: { type: 'string', enum: ['session', 'api-key', 'open', 'service'] } },
    }),
    ...errorResponses([401]),
  },
};

const AUTH_CONFIG_DOC: RouteDoc = {
  ...pub,
  operationId: 'authConfig',
  tags: ['auth'],
  summary: 'Whether authentication is enforced.',
  response: { '200': json({ type: 'object', required: ['authEnabled'], properties: { authEnabled: { type: 'boolean' } } }) },
};

const CREATE_KEY_DOC: RouteDoc = {
  operationId: 'createApiKey',
  tags: ['api-keys'],
  summary: 'Create an API key (shown once): for yourself, or (users:manage) for a service account with userId.',
  description:
    'A key never outlives the credential that made it: made with an expiring API key, it inherits that expiry and may not ask for a later one (400, reason expiry-beyond-parent); made from a session it may live as asked, or forever. At most API_KEY_CREATE_PER_HOUR (default 20) keys are created or rotated per account and hour (429 with Retry-After). A request with a key that no longer works gets 401 with error.details.reason: revoked, expired, rotated (its grace period after a rotation is over), owner-disabled, or unknown.',
  requestBody: {
    required: true,
    content: {
      'application/json': {
        schema: {
          type: 'object',
          required: ['name'],
          additionalProperties: false,
          properties: {
            name: { type: 'string', maxLength: 200, description: 'Trimmed; not blank, no control characters.' },
            userId: {
              type: 'string',
              description: 'Issue the key for this service account (needs users:manage); people make their own keys. Default: the caller.',
            },
            expiresInDays: {
              type: 'number',
              exclusiveMinimum: 0,
              description:
                'Lifetime in days (not with expiresAt). Without either the key does not expire, unless it is made with an expiring API key: then it inherits that expiry, and may not ask for a later one.',
            },
            expiresAt: { type: 'string', format: 'date-time', description: 'A future expiry (not with expiresInDays).' },
          },
        },
      },
    },
  },
  response: {
    '201': json(
      {
        type: 'object',
        required: ['id', 'name', 'key', 'expiresAt', 'userId', 'owner'],
        properties: {
          id: { type: 'string' },
          name: { type: 'string' },
          key: { type: 'string', pattern: '^si_[0-9a-f]{96}$' },
          expiresAt: { type: ['string', 'null'], format: 'date-time' },
          userId: { type: 'string', description: 'The owner of the key.' },
          owner: { type: 'string', description: 'The owner’s username.' },
        },
      },
      'Created',
    ),
    ...errorResponses([400, 401, 403, 404, 429]),
  },
};

const ROTATE_KEY_DOC: RouteDoc = {
  operationId: 'rotateApiKey',
  tags: ['api-keys'],
  summary:
    'Give a key a new secret (shown once). The old secret keeps working for API_KEY_ROTATE_GRACE_S (default 3600 s), then answers 401 with error.details.reason "rotated". Yours; with keys:all: anyone’s.',
  parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
  response: {
    '200': json({
      type: 'object',
      required: ['id', 'name', 'key', 'expiresAt', 'previousKeyValidUntil'],
      properties: {
        id: { type: 'string', description: 'The same id: the key keeps its name, owner and expiry.' },
        name: { type: 'string' },
        key: { type: 'string', pattern: '^si_[0-9a-f]{96}$' },
        expiresAt: { type: ['string', 'null'], format: 'date-time' },
        previousKeyValidUntil: { type: 'string', format: 'date-time' },
      },
    }),
    ...errorResponses([401, 404, 409, 429]),
  },
};

const LIST_KEYS_DOC: RouteDoc = {
  operationId: 'listApiKeys',
  tags: ['api-keys'],
  summary: 'Your API keys, newest first (never the key itself).',
  parameters: [
    {
      name: 'all',
      in: 'query',
      schema: { type: 'string', enum: ['true'] },
      description: 'With keys:all: every user’s keys, each with its owner.',
    },
  ],
  response: {
    '200': json({ type: 'object', required: ['keys'], properties: { keys: { type: 'array', items: ref('ApiKey') } } }),
    ...errorResponses([401]),
  },
};

const DELETE_KEY_DOC: RouteDoc = {
  operationId: 'deleteApiKey',
  tags: ['api-keys'],
  summary: 'Revoke an API key (yours; with keys:all: anyone’s).',
  parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
  response: { '200': json(okBody), ...errorResponses([401, 404]) },
};
