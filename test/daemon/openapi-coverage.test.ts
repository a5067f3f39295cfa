/**
 * Every route the daemon registers is in the OpenAPI document with the same method and path, every
 * documented operation exists, the document validates, and real answers of the JSON routes fit the
 * documented response schemas. A new route without documentation fails here, naming where to add it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { compileErrors, validate } from '@readme/openapi-parser';
import sharp from 'sharp';
import { parse } from 'yaml';
import { routeOf, targets } from '../../daemon/jobs/targets.js';
import { registeredRoutes } from '../../daemon/server.js';
import { startServer, type TestServer } from '../helpers/server.js';

type Json = Record<string, any>;
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

/** Served by @fastify/swagger-ui for the page at /api/docs (which is documented): assets and copies of this document. */
const isDocAsset = (url: string) => url.startsWith('/api/docs/');

const toOpenApi = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/** Where the documentation of a route lives, for the failure message. */
function whereToDocument(path: string): string {
  if (/^\/api\/v1\/(files|pipelines)(\/|$)/.test(path)) return 'daemon/library/openapi.ts (libraryPaths)';
  if (/^\/api\/v1\/tools\/(image|video|audio|document)\//.test(path))
    return 'daemon/openapi/tool-operations.ts (generated from the catalog by targets(); a fixed route carries its own schema)';
  if (/^\/api\/auth\/(login|logout|session)$/.test(path)) return "the route's `schema` in daemon/routes/auth.ts (a RouteDoc)";
  if (/^\/api\/auth\/|^\/api\/v1\/(teams|settings|branding|admin\/audit|users)/.test(path))
    return 'daemon/accounts/openapi.ts (accountPaths)';
  return "the route's `schema` (a RouteDoc, daemon/openapi/route-doc.ts), or the openapi.ts module of the feature that owns the route";
}

/**
 * A small JSON Schema check of what the document's schemas state (types, required, properties,
 * items, allOf/oneOf, const, enum, component $refs): enough to catch a schema that does not match
 * what a route sends.
 */
function conforms(doc: Json, schema: Json, value: unknown, at: string, problems: string[]): void {
  if (schema.$ref) {
    const name = String(schema.$ref).replace('#/components/schemas/', '');
    return conforms(doc, doc.components.schemas[name], value, at, problems);
  }
  if (schema.allOf) for (const s of schema.allOf) conforms(doc, s, value, at, problems);
  if (schema.oneOf) {
    const fits = schema.oneOf.filter((s: Json) => {
      const p: string[] = [];
      conforms(doc, s, value, at, p);
      return p.length === 0;
    });
    if (fits.length !== 1) problems.push(`${at}: fits ${fits.length} of the oneOf schemas`);
  }
  if ('const' in schema && value !== schema.const)
    problems.push(`${at}: expected ${JSON.stringify(schema.const)}, got ${JSON.stringify(value)}`);
  if (schema.enum && !schema.enum.includes(value)) problems.push(`${at}: ${JSON.stringify(value)} is not one of ${schema.enum.join(', ')}`);
  if (schema.type) {
    const types: string[] = [schema.type].flat();
    const actual = value === null ? 'null' : Array.isArray(value) ? 'array' : Number.isInteger(value) ? 'integer' : typeof value;
    if (!types.includes(actual) && !(actual === 'integer' && types.includes('number'))) {
      problems.push(`${at}: expected ${types.join('|')}, got ${actual}`);
      return;
    }
  }
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    for (const k of schema.required ?? []) if (!(k in value)) problems.push(`${at}.${k}: required but absent`);
    for (const [k, s] of Object.entries<Json>(schema.properties ?? {}))
      if (k in value) conforms(doc, s, (value as Json)[k], `${at}.${k}`, problems);
  }
  if (Array.isArray(value) && schema.items)
    value.forEach((v, i) => {
      conforms(doc, schema.items, v, `${at}[${i}]`, problems);
    });
}

describe('OpenAPI coverage', () => {
  let s: TestServer;
  let doc: Json;
  before(async () => {
    s = await startServer();
    const res = await fetch(`${s.url}/api/v1/openapi.yaml`);
    assert.equal(res.status, 200);
    doc = parse(await res.text());
  });
  after(() => s.close());

  it('documents every registered route (method and path), and only routes that exist', async () => {
    const routes = registeredRoutes(s.app).filter((r) => r.method !== 'HEAD' && r.method !== 'OPTIONS' && !isDocAsset(r.url));
    // The capture itself must work, or this test would pass on an empty list.
    for (const t of targets())
      assert.ok(
        routes.some((r) => r.method === 'POST' && r.url === routeOf(t)),
        `the captured routes include POST ${routeOf(t)}`,
      );
    for (const url of ['/api/v1/files/:id', '/api/v1/pipelines/:id/run', '/api/v1/jobs/:jobId/progress', '/api/auth/login'])
      assert.ok(
        routes.some((r) => r.url === url),
        `the captured routes include ${url}`,
      );

    const missing = routes
      .filter((r) => !doc.paths[toOpenApi(r.url)]?.[r.method.toLowerCase()])
      .map(
        (r) =>
          `${r.method} ${toOpenApi(r.url)} (fastify ${r.url}) is not in the OpenAPI document: document it in ${whereToDocument(toOpenApi(r.url))}.`,
      );
    assert.deepEqual(missing, [], `Undocumented routes:\n${missing.join('\n')}`);

    const registered = new Set(routes.map((r) => `${r.method} ${toOpenApi(r.url)}`));
    const stale: string[] = [];
    for (const [p, item] of Object.entries<Json>(doc.paths)) {
      for (const m of METHODS)
        if (item[m] && !registered.has(`${m.toUpperCase()} ${p}`))
          stale.push(`${m.toUpperCase()} ${p} is documented but no such route is registered (${whereToDocument(p)}).`);
    }
    assert.deepEqual(stale, [], stale.join('\n'));
  });

  it('validates as OpenAPI 3.1, with unique operation ids and every path parameter declared', async () => {
    assert.equal(doc.openapi, '3.1.0');
    const result = await validate(structuredClone(doc) as never);
    assert.equal(result.valid, true, result.valid ? '' : compileErrors(result));
    const ids = new Map<string, string>();
    for (const [p, item] of Object.entries<Json>(doc.paths)) {
      const names = [...p.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      for (const m of METHODS) {
        const op = item[m];
        if (!op) continue;
        assert.ok(!ids.has(op.operationId), `operationId ${op.operationId} of ${m} ${p} is also used by ${ids.get(op.operationId)}`);
        ids.set(op.operationId, `${m} ${p}`);
        const declared = [...(item.parameters ?? []), ...(op.parameters ?? [])]
          .filter((x: Json) => x.in === 'path')
          .map((x: Json) => x.name);
        assert.deepEqual(declared.sort(), [...names].sort(), `${m.toUpperCase()} ${p} declares path parameters ${declared.join(', ')}`);
        assert.ok(Object.keys(op.responses ?? {}).length > 0, `${m.toUpperCase()} ${p} has responses`);
      }
    }
    assert.ok(doc.tags.some((t: Json) => t.name === 'files') && doc.tags.some((t: Json) => t.name === 'pipelines'));
  });

  it('describes what the files, pipelines and fixed JSON routes really answer', async () => {
    const call = async (method: string, path: string, body?: unknown, template = path) => {
      const init: RequestInit = { method, headers: { authorization: `Bearer ${s.token}` } };
      if (body instanceof FormData) init.body = body;
      else if (body !== undefined) {
        init.body = JSON.stringify(body);
        (init.headers as Record<string, string>)['content-type'] = 'application/json';
      }
      const res = await fetch(s.url + path, init);
      const bytes = Buffer.from(await res.arrayBuffer());
      const text = bytes.toString('utf8');
      const op = doc.paths[template]?.[method.toLowerCase()];
      assert.ok(op, `${method} ${template} is documented`);
      const answer = op.responses[String(res.status)];
      const documented = answer?.$ref ? doc.components.responses[answer.$ref.split('/').pop()] : answer;
      assert.ok(documented, `${method} ${path} answered ${res.status}, which is not documented: ${text.slice(0, 300)}`);
      const type = (res.headers.get('content-type') ?? '').split(';')[0]!;
      const media = Object.keys(documented.content ?? {});
      assert.ok(
        media.some(
          (m) => m === type || m === '*/*' || (m.endsWith('/*') && type.startsWith(m.slice(0, -1))) || m === 'application/octet-stream',
        ),
        `${method} ${path} answered ${type}, documented ${media.join(', ')}`,
      );
      for (const h of Object.keys(documented.headers ?? {}))
        assert.ok(res.headers.has(h), `${method} ${path} (${res.status}) sends the documented header ${h}`);
      if (type !== 'application/json') return { status: res.status, bytes };
      const schema = documented.content?.['application/json']?.schema;
      const value = JSON.parse(text);
      if (schema) {
        const problems: string[] = [];
        conforms(doc, schema, value, 'body', problems);
        assert.deepEqual(
          problems,
          [],
          `${method} ${path} (${res.status}) does not fit its documented schema:\n${problems.join('\n')}\n${text.slice(0, 500)}`,
        );
      }
      return value;
    };

    const file = (name: string, text: string) => new File([Buffer.from(text)], name);
    const upload = new FormData();
    upload.append('file', file('notes.txt', 'first'), 'notes.txt');
    upload.append('name', 'notes.txt');
    const item = await call('POST', '/api/v1/files', upload);
    const id = item.id as string;
    const v2 = new FormData();
    v2.append('file', file('notes.txt', 'second version'), 'notes.txt');
    await call('POST', `/api/v1/files/${id}/versions`, v2, '/api/v1/files/{id}/versions');
    await call('GET', '/api/v1/files?type=text', undefined, '/api/v1/files');
    await call('GET', '/api/v1/files/usage');
    await call('GET', `/api/v1/files/${id}`, undefined, '/api/v1/files/{id}');
    await call('GET', `/api/v1/files/${id}/versions`, undefined, '/api/v1/files/{id}/versions');
    await call('PATCH', `/api/v1/files/${id}`, { name: 'renamed.txt' }, '/api/v1/files/{id}');
    const restored = await call(
      'POST',
      `/api/v1/files/${id}/versions/1/restore`,
      undefined,
      '/api/v1/files/{id}/versions/{version}/restore',
    );
    assert.equal(restored.version.source, 'restore');
    assert.equal(restored.version.restoredFrom, 1);
    await call('DELETE', `/api/v1/files/${id}/versions/2`, undefined, '/api/v1/files/{id}/versions/{version}');
    await call('GET', `/api/v1/files/${id}/versions/abc/download`, undefined, '/api/v1/files/{id}/versions/{version}/download');
    await call('GET', '/api/v1/files/no-such-item', undefined, '/api/v1/files/{id}');
    const dl = await call('GET', `/api/v1/files/${id}/download?version=3`, undefined, '/api/v1/files/{id}/download');
    assert.equal(dl.bytes.toString(), 'first');
    await call('GET', `/api/v1/files/${id}/versions/1/download`, undefined, '/api/v1/files/{id}/versions/{version}/download');
    await call('DELETE', `/api/v1/files/${id}`, undefined, '/api/v1/files/{id}');

    const def = {
      name: 'thumbs',
      description: 'small webp',
      steps: [
        { tool: 'resize', settings: { width: 10 } },
        { tool: 'convert', settings: { format: 'webp' } },
      ],
    };
    const saved = await call('POST', '/api/v1/pipelines', def);
    await call('POST', '/api/v1/pipelines', def); // 409: the name is taken
    await call('POST', '/api/v1/pipelines/validate', { steps: [{ tool: 'resize', settings: { width: 10 } }] });
    await call('POST', '/api/v1/pipelines/validate', { steps: [{ tool: 'no-such-tool' }] });
    await call('GET', '/api/v1/pipelines');
    await call('GET', `/api/v1/pipelines/${saved.id}`, undefined, '/api/v1/pipelines/{id}');
    await call('PUT', `/api/v1/pipelines/${saved.id}`, { steps: [{ tool: 'resize', settings: { width: 12 } }] }, '/api/v1/pipelines/{id}');
    const png = new File(
      [
        await sharp({ create: { width: 16, height: 8, channels: 3, background: '#c03030' } })
          .png()
          .toBuffer(),
      ],
      'red.png',
    );
    const one = new FormData();
    one.append('file', png, 'red.png');
    const piped = await call('POST', `/api/v1/pipelines/${saved.id}/run`, one, '/api/v1/pipelines/{id}/run');
    assert.ok(piped.downloadUrl, JSON.stringify(piped));
    const adHoc = new FormData();
    adHoc.append('pipeline', JSON.stringify({ steps: [{ tool: 'convert', settings: { format: 'jpg' } }] }));
    adHoc.append('files', png, 'a.png');
    adHoc.append('files', png, 'b.png');
    const zip = await call('POST', '/api/v1/pipelines/batch', adHoc);
    assert.equal(zip.status, 200);
    await call('DELETE', `/api/v1/pipelines/${saved.id}`, undefined, '/api/v1/pipelines/{id}');

    const run = new FormData();
    run.append('file', png, 'red.png');
    run.append('settings', JSON.stringify({ width: 8 }));
    const result = await call('POST', '/api/v1/tools/image/resize', run);
    await call('GET', `/api/v1/jobs/${result.jobId}`, undefined, '/api/v1/jobs/{jobId}');
    const events = await call('GET', `/api/v1/jobs/${result.jobId}/progress`, undefined, '/api/v1/jobs/{jobId}/progress');
    assert.match(events.bytes.toString(), /event: completed/);
    await call('POST', `/api/v1/jobs/${result.jobId}/cancel`, undefined, '/api/v1/jobs/{jobId}/cancel'); // 409: it has ended
    const [, , , , jobId, filename] = (result.downloadUrl as string).split('/');
    const out = await call('GET', result.downloadUrl, undefined, '/api/v1/download/{jobId}/{filename}');
    assert.equal((await sharp(out.bytes).metadata()).width, 8);
    assert.equal(`${jobId}/${filename}`, result.downloadUrl.split('/').slice(4).join('/'));

    const key = await call('POST', '/api/v1/api-keys', { name: 'coverage', expiresInDays: 1 });
    await call('GET', '/api/v1/api-keys?all=true', undefined, '/api/v1/api-keys');
    await call('DELETE', `/api/v1/api-keys/${key.id}`, undefined, '/api/v1/api-keys/{id}');
    await call('GET', '/api/v1/jobs?limit=5', undefined, '/api/v1/jobs');
    await call('GET', '/api/auth/session');
    await call('GET', '/api/v1/health');
    await call('GET', '/api/v1/readyz');
    await call('GET', '/api/v1/admin/health');
    await call('GET', '/api/v1/tools');
    await call('POST', '/api/v1/tools/video/resize', undefined, '/api/v1/tools/{section}/{toolId}');
    await call('POST', '/api/v1/tools/image/no-such-tool/batch', undefined, '/api/v1/tools/{section}/{toolId}/batch');
    await call('GET', '/api/v1/config/auth');
    for (const path of ['/api/auth/users', '/api/auth/mfa', '/api/v1/teams', '/api/v1/settings', '/api/v1/branding', '/api/v1/admin/audit'])
      await call('GET', path);
    const team = await call('POST', '/api/v1/teams', { name: 'coverage' });
    await call('GET', `/api/v1/teams/${team.team.id}`, undefined, '/api/v1/teams/{id}');
    await call('DELETE', `/api/v1/teams/${team.team.id}`, undefined, '/api/v1/teams/{id}');
    const user = await call('POST', '/api/auth/register', { username: 'coverage', password: 'a long enough password 1' });
    await call('PUT', `/api/auth/users/${user.user.id}`, { role: 'user' }, '/api/auth/users/{id}');
    await call('DELETE', `/api/auth/users/${user.user.id}`, undefined, '/api/auth/users/{id}');
    const page = await call('GET', '/api/docs');
    assert.match(page.bytes.toString(), /swagger-ui/);
  });
});
