/**
 * The OpenAPI 3.1 document, served as YAML and read by /api/docs. Every operation comes from where its
 * route is declared: the catalog's tool, preset and batch routes (tool-operations.ts), the fixed routes'
 * own `schema` (route-doc.ts), and the openapi.ts module of each feature (accounts, library, MCP, watch).
 */
import { GROUP_TITLES, SECTIONS } from '../../src/core/tool.js';
import { VERSION } from '../../src/core/version.js';
import { ACCOUNT_TAGS, accountPaths } from '../accounts/openapi.js';
import { LIBRARY_TAGS, libraryPaths } from '../library/openapi.js';
import { FEATURE_TAGS, featurePaths } from '../features/openapi.js';
import { passportPhotoPaths } from '../routes/passport-photo.js';
import { WATCH_TAGS, watchFolderPaths } from '../watch/openapi.js';
import { errorResponseComponents, schemas } from './components.js';
import { MCP_TAGS, mcpPaths } from './mcp.js';
import { routeDocPaths, type RegisteredRoute } from './route-doc.js';
import { toolPaths } from './tool-operations.js';
import { targets } from '../jobs/targets.js';
import { EXEMPT as RATE_EXEMPT } from '../http/rate-limit.js';

type Json = Record<string, unknown>;

/** Routes that carry no schema of their own: the docs page of @fastify/swagger-ui (openapi/swagger-ui.ts). */
const PLUGIN_PATHS: Json = {
  '/api/docs': {
    get: {
      security: [],
      operationId: 'docsUi',
      tags: ['docs'],
      summary: 'The interactive API docs (Swagger UI, served offline) for this document.',
      responses: { '200': { description: 'HTML page.', content: { 'text/html': { schema: { type: 'string' } } } } },
    },
  },
};

/**
 * The library's operations under the tag `library`: the module tags them `files` after its routes, which
 * is also the name of the section of file tools, and one tag must not name two things.
 */
function libraryTagged(paths: Json): Json {
  const retag = (t: string) => (t === 'files' ? 'library' : t);
  return Object.fromEntries(
    Object.entries(paths).map(([p, item]) => [
      p,
      Object.fromEntries(
        Object.entries(item as Record<string, Json>).map(([m, op]) => [
          m,
          Array.isArray(op.tags) ? { ...op, tags: op.tags.map(retag) } : op,
        ]),
      ),
    ]),
  );
}

/** Each section's tag, naming only the groups that have tools in that section. */
function sectionTags(): Json[] {
  return SECTIONS.map((s) => {
    const groups = [
      ...new Set(
        targets()
          .filter((t) => t.section === s)
          .map((t) => t.tool.group),
      ),
    ];
    const titles = Object.entries(GROUP_TITLES)
      .filter(([g]) => groups.includes(g as keyof typeof GROUP_TITLES))
      .map(([, title]) => title);
    return { name: s, description: `${s} tools and presets${titles.length ? ` (groups: ${titles.join(', ')})` : ''}` };
  });
}

/** Path items merged method by method (two sources may describe different methods of one path). */
function mergePaths(...parts: Json[]): Json {
  const out: Record<string, Json> = {};
  for (const part of parts) for (const [p, item] of Object.entries(part)) out[p] = { ...out[p], ...(item as Json) };
  return out;
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options']);

/**
 * Every route but the probes passes the request rate limit (RATE_LIMIT_PER_MINUTE, on by default), so
 * each of their operations can answer 429: the document listed it for none, and a client generated from
 * it had no case for the answer it was most likely to meet under load.
 */
function withRateLimited(paths: Json): Json {
  const out: Json = {};
  for (const [p, item] of Object.entries(paths)) {
    const url = p.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
    // New objects: the operations may be constants other documents (or paths) share.
    out[p] = RATE_EXEMPT.has(url)
      ? item
      : Object.fromEntries(
          Object.entries(item as Record<string, { responses?: Json }>).map(([method, op]) =>
            METHODS.has(method) && op.responses && !op.responses['429']
              ? [method, { ...op, responses: { ...op.responses, '429': RATE_LIMITED } }]
              : [method, op],
          ),
        );
  }
  return out;
}

const RATE_LIMITED = {
  description: 'Error: RATE_LIMITED (too many requests a minute); wait Retry-After seconds.',
  headers: { 'Retry-After': { schema: { type: 'integer' }, description: 'Seconds until a request is taken again.' } },
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
};

const cache = new WeakMap<readonly RegisteredRoute[], Json>();

/** The document for an app's routes (server.ts registeredRoutes), once they are all registered. */
export function openApiDocument(routes: readonly RegisteredRoute[]): Json {
  const cached = cache.get(routes);
  if (cached) return cached;
  const components: Json = schemas();
  const paths = withRateLimited(
    mergePaths(
      routeDocPaths(routes),
      PLUGIN_PATHS,
      accountPaths(),
      libraryTagged(libraryPaths()),
      mcpPaths(),
      watchFolderPaths(),
      featurePaths(),
      passportPhotoPaths(),
      toolPaths(components),
    ),
  );
  const doc: Json = {
    openapi: '3.1.0',
    info: {
      title: 'kiln',
      version: VERSION,
      description:
        'Process images, video, audio and documents with named tools. Run a tool with a multipart POST; a fast run answers 200 with a download URL, a longer one 202 with a job id to follow over server-sent events.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    tags: [
      ...sectionTags(),
      { name: 'auth' },
      { name: 'api-keys' },
      { name: 'jobs' },
      { name: 'catalog' },
      { name: 'health' },
      { name: 'docs' },
      ...ACCOUNT_TAGS.map((name) => ({ name })),
      ...LIBRARY_TAGS.map((t) => (t === 'files' ? 'library' : t)).map((name) => ({
        name,
        ...(name === 'library' ? { description: 'the file library (/api/v1/files)' } : {}),
      })),
      ...MCP_TAGS.map((name) => ({ name })),
      ...WATCH_TAGS.map((name) => ({ name })),
      ...FEATURE_TAGS.map((name) => ({ name })),
    ],
    paths,
    components: {
      schemas: components,
      responses: errorResponseComponents(),
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'A session token from POST /api/auth/login, or an API key (si_…).' },
      },
    },
  };
  cache.set(routes, doc);
  return doc;
}
