/** The generated API description: OpenAPI 3.1 that validates, the offline docs UI, llms.txt. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { compileErrors, validate } from '@readme/openapi-parser';
import { parse } from 'yaml';
import { routeOf, targets } from '../../daemon/jobs/targets.js';
import { registeredRoutes } from '../../daemon/server.js';
import { startDaemonProcess } from '../helpers/daemon-process.js';
import { tempDir } from '../helpers/fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

describe('API description', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(() => s.close());

  it('serves an OpenAPI 3.1 document that validates and covers every tool, preset and batch route', async () => {
    const res = await fetch(`${s.url}/api/v1/openapi.yaml`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /yaml/);
    const doc = parse(await res.text());
    assert.equal(doc.openapi, '3.1.0');
    const result = await validate(structuredClone(doc));
    assert.equal(result.valid, true, result.valid ? '' : compileErrors(result));
    for (const t of targets()) {
      assert.ok(doc.paths[routeOf(t)]?.post, `route for ${t.id}`);
      if (t.batchable) assert.ok(doc.paths[routeOf(t) + '/batch']?.post, `batch route for ${t.id}`);
    }
    const resize = doc.paths['/api/v1/tools/image/resize'].post;
    const form = resize.requestBody.content['multipart/form-data'];
    assert.equal(form.schema.properties.file.format, 'binary');
    assert.equal(form.encoding.settings.contentType, 'application/json');
    const settingsSchema = doc.components.schemas[form.schema.properties.settings.$ref.split('/').pop()];
    assert.ok(settingsSchema.properties.width, 'resize settings schema lists width');
    assert.ok(resize.responses['200'] && resize.responses['202'] && resize.responses['415']);
    assert.ok(doc.components.securitySchemes.bearer);
    assert.deepEqual(doc.paths['/api/v1/health'].get.security, []);
    assert.ok(doc.components.schemas.Error.properties.error.properties.code.enum.includes('UNSUPPORTED_INPUT'));

    // A fixed route's operation is the route's own schema, not a second description beside it.
    const described = registeredRoutes(s.app).filter((r) => r.method !== 'HEAD' && (r.schema as { operationId?: string })?.operationId);
    assert.ok(described.length >= 20, `${described.length} fixed routes carry their schema`);
    for (const r of described) {
      const { response, ...operation } = r.schema as Record<string, unknown>;
      const op = doc.paths[r.url.replace(/:(\w+)/g, '{$1}')][r.method.toLowerCase()];
      // The document adds the rate limiter's 429 to an operation that does not describe its own.
      const own = response as Record<string, unknown>;
      const { '429': _limited, ...rest } = op.responses;
      const seen = own['429'] || r.url === '/api/v1/health' ? op : { ...op, responses: rest };
      if (!own['429'] && r.url !== '/api/v1/health' && r.url !== '/api/v1/readyz') assert.ok(_limited, `${r.method} ${r.url}: 429`);
      assert.deepEqual(seen, JSON.parse(JSON.stringify({ ...operation, responses: response })), `${r.method} ${r.url}`);
    }
  });

  it('names each tag once, files tools apart from the library, and a section tag only its own groups', async () => {
    const doc = parse(await (await fetch(`${s.url}/api/v1/openapi.yaml`)).text());
    const names = doc.tags.map((t: { name: string }) => t.name);
    assert.deepEqual(names, [...new Set(names)], 'no tag twice');
    assert.deepEqual(doc.paths['/api/v1/files'].post.tags, ['library']);
    assert.deepEqual(doc.paths['/api/v1/tools/files/convert-document'].post.tags, ['files']);
    const tag = (n: string) => doc.tags.find((t: { name: string }) => t.name === n).description as string;
    assert.match(tag('audio'), /\(groups: audio\)$/);
    assert.doesNotMatch(tag('audio'), /AI tools|watermark/);
    assert.match(tag('image'), /AI tools/);
    assert.doesNotMatch(tag('image'), /\baudio\b/);
  });

  it('serves the interactive docs with local assets', async () => {
    const page = await fetch(`${s.url}/api/docs/`);
    assert.equal(page.status, 200);
    const html = await page.text();
    assert.match(html, /swagger-ui/);
    assert.doesNotMatch(html, /https?:\/\/(unpkg|cdn)/);
    const asset = await fetch(`${s.url}/api/docs/static/swagger-ui-bundle.js`);
    assert.equal(asset.status, 200);
    const spec = await (await fetch(`${s.url}/api/docs/json`)).json();
    assert.ok(spec.paths['/api/v1/tools/image/resize']);
  });

  it('serves the interactive docs on a node that cannot require() an ES module', async () => {
    // `engines` takes node 20.9 on, but only 20.19 and 22.12 let CommonJS require() an ES module: on
    // 20.9–20.18 and 22.0–22.11 that throws ERR_REQUIRE_ESM. The docs' assets (@fastify/static) and
    // their forwarded first request (fastify's inject, light-my-request) require content-disposition and
    // cookie, whose newest majors are ES modules only: /api/docs/ answered 500 there until package.json's
    // overrides kept them on the CommonJS majors. This node is made to refuse the same way.
    const flags = process.allowedNodeEnvironmentFlags.has('--no-experimental-require-module') ? ['--no-experimental-require-module'] : [];
    const d = await startDaemonProcess(tempDir('kiln-docs-cjs-'), {}, { signIn: false, nodeFlags: flags });
    try {
      for (const p of ['/api/docs/', '/api/docs/static/swagger-ui-bundle.js', '/api/docs/json']) {
        const res = await fetch(d.url + p);
        const body = await res.text();
        assert.equal(res.status, 200, `${p}: ${body.slice(0, 200)} ${d.stdout().slice(0, 400)}`);
      }
    } finally {
      d.child.kill('SIGTERM');
      await d.exited;
    }
  });

  it('serves llms.txt and llms-full.txt generated from the catalog', async () => {
    const short = await (await fetch(`${s.url}/llms.txt`)).text();
    assert.match(short, /- resize: .* \(POST \/api\/v1\/tools\/image\/resize\)/);
    const full = await (await fetch(`${s.url}/llms-full.txt`)).text();
    assert.match(full, /### resize/);
    assert.match(full, /- width \(integer/);
    for (const t of targets()) assert.ok(full.includes(`### ${t.id}\n`), t.id);
  });
});
