/**
 * The daemon's MCP endpoint with the SDK's Streamable HTTP client: API-key authentication (401
 * without), library file ids and URLs as inputs, a call is an ordinary job, results carry download URLs.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import sharp from 'sharp';
import { REPO } from '../helpers/cli.js';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { makeVideo } from '../helpers/media.js';
import { api, filePart, form, mcpInitialize, startServer, type TestServer } from '../helpers/server.js';

type Result = { isError?: boolean; structuredContent?: Record<string, any> };

describe('MCP over HTTP on the daemon', () => {
  let s: TestServer;
  let key: string;
  let client: Client;
  let images: Server;
  let imagesUrl: string;
  const dir = tempDir('kiln-mcp-http-');

  before(async () => {
    s = await startServer();
    key = (await api(s, s.token, 'POST', '/api/v1/api-keys', { name: 'agent' })).body.key;
    client = new Client({ name: 'kiln-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${s.url}/api/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
    );
    const png = await readFile(await makeImage(dir, 'served.png', 120, 60));
    images = createServer((req, res) => {
      if (req.url === '/redirect') {
        res.writeHead(302, { location: '/pic.png' }).end();
        return;
      }
      res.writeHead(req.url === '/pic.png' ? 200 : 404, { 'content-type': 'image/png' }).end(req.url === '/pic.png' ? png : undefined);
    });
    await new Promise<void>((r) => images.listen(0, '127.0.0.1', r));
    imagesUrl = `http://127.0.0.1:${(images.address() as { port: number }).port}`;
  });
  after(async () => {
    await client.close();
    images.close();
    await s.close();
    delete process.env.KILN_URL_ALLOWLIST;
  });

  it('refuses a request without credentials', async () => {
    const res = await mcpInitialize(s.url);
    assert.equal(res.status, 401);
    assert.equal((await res.json()).error.code, 'UNAUTHORIZED');
  });

  it('lists the catalog with library/URL inputs and no output path', async () => {
    const { tools } = await client.listTools();
    const resize = tools.find((t) => t.name === 'resize')!;
    const props = resize.inputSchema.properties as Record<string, { description?: string }>;
    assert.match(props.input!.description!, /library file id/);
    assert.equal(props.output, undefined);
  });

  it('runs a tool on a library item as a job and answers a download URL', async () => {
    const item = await api(
      s,
      key,
      'POST',
      '/api/v1/files',
      await form({ file: await filePart(await makeImage(dir, 'lib.png', 200, 100)) }),
    );
    assert.equal(item.status, 201, item.text);
    const r = (await client.callTool({ name: 'resize', arguments: { input: item.body.id, width: 40 } })) as Result;
    assert.notEqual(r.isError, true, JSON.stringify(r));
    const { jobId, outputs } = r.structuredContent!;
    const res = await fetch(outputs[0].url, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(res.status, 200);
    assert.equal((await sharp(Buffer.from(await res.arrayBuffer())).metadata()).width, 40);
    const job = await api(s, key, 'GET', `/api/v1/jobs/${jobId}`);
    assert.equal(job.body.status, 'completed');
    assert.equal(job.body.tool, 'resize');
  });

  it('takes URLs through the address guard', async () => {
    const refused = (await client.callTool({ name: 'info', arguments: { input: `${imagesUrl}/pic.png` } })) as Result;
    assert.equal(refused.isError, true);
    assert.equal(refused.structuredContent!.error.reason, 'url-not-allowed');
    process.env.KILN_URL_ALLOWLIST = '127.0.0.1';
    const r = (await client.callTool({ name: 'info', arguments: { input: `${imagesUrl}/redirect` } })) as Result;
    assert.notEqual(r.isError, true, JSON.stringify(r));
    assert.equal(r.structuredContent!.data.width, 120);
    const missing = (await client.callTool({ name: 'info', arguments: { input: `${imagesUrl}/nothing.png` } })) as Result;
    assert.equal(missing.isError, true);
    assert.equal(missing.structuredContent!.error.code, 'UNSUPPORTED_INPUT');
  });

  it("answers another user's library item as not found", async () => {
    const r = (await client.callTool({ name: 'info', arguments: { input: 'no-such-item' } })) as Result;
    assert.equal(r.isError, true);
    assert.equal(r.structuredContent!.error.code, 'NOT_FOUND');
  });

  it('cancels the job when the call is cancelled', async () => {
    const video = makeVideo(dir, 'long.mp4', { width: 640, height: 360, durationS: 30, audio: false });
    const item = await api(s, key, 'POST', '/api/v1/files', await form({ file: await filePart(video) }));
    const controller = new AbortController();
    const call = client.callTool({ name: 'convert-video', arguments: { input: item.body.id, format: 'webm' } }, undefined, {
      signal: controller.signal,
      timeout: 120_000,
      onprogress: (p) => {
        if (p.progress > 0) controller.abort();
      },
    });
    await assert.rejects(call);
    let status = '';
    for (let i = 0; i < 100 && status !== 'cancelled'; i++) {
      const jobs = await api(s, key, 'GET', '/api/v1/jobs');
      status = jobs.body.jobs.find((j: { tool: string }) => j.tool === 'convert-video')?.status ?? '';
      if (status !== 'cancelled') await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(status, 'cancelled');
  });

  it('kiln mcp --server forwards local files to the daemon and writes the output next to the input', async () => {
    const local = new Client({ name: 'kiln-test', version: '1.0.0' });
    await local.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [path.join(REPO, 'dist', 'src', 'cli', 'main.js'), 'mcp', '--server', s.url, '--tools', '^resize$', '--root', dir],
        env: { ...(process.env as Record<string, string>), KILN_API_KEY: key, KILN_SERVER: '' },
        stderr: 'ignore',
      }),
    );
    try {
      const input = await makeImage(dir, 'remote-in.png', 100, 50);
      const r = (await local.callTool({ name: 'resize', arguments: { input, width: 25 } })) as Result;
      assert.notEqual(r.isError, true, JSON.stringify(r));
      const out = r.structuredContent!.outputs[0].path as string;
      assert.equal(path.dirname(out), dir);
      assert.equal((await sharp(out).metadata()).width, 25);
      const jobs = (await api(s, key, 'GET', '/api/v1/jobs')).body.jobs as { tool: string }[];
      assert.ok(
        jobs.some((j) => j.tool === 'resize'),
        'the run happened on the daemon',
      );
    } finally {
      await local.close();
    }
  });
});

describe('MCP session idle time on the daemon', () => {
  it('a call waiting for a long job keeps its session open; an idle session is closed', async () => {
    process.env.KILN_MCP_IDLE_MS = '1000';
    const s = await startServer();
    const dir = tempDir('kiln-mcp-idle-');
    const client = new Client({ name: 'kiln-test', version: '1.0.0' });
    try {
      const key = (await api(s, s.token, 'POST', '/api/v1/api-keys', { name: 'idle' })).body.key;
      // The fixture first: made after connecting, it left the session idle past the 1 s on a loaded machine.
      const video = makeVideo(dir, 'idle.mp4', { width: 640, height: 360, durationS: 20, audio: false });
      const item = await api(s, key, 'POST', '/api/v1/files', await form({ file: await filePart(video) }));
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${s.url}/api/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
      );
      const started = Date.now();
      // The sweep took the session for idle one second into the call and so cancelled its job.
      const r = (await client.callTool({ name: 'convert-video', arguments: { input: item.body.id, format: 'webm' } }, undefined, {
        timeout: 120_000,
      })) as Result;
      assert.notEqual(r.isError, true, JSON.stringify(r));
      assert.ok(Date.now() - started > 2500, 'the call outlasted the idle time and a sweep');
      // A session with no request open (here one without its event stream) is closed once idle.
      const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
      const init = await mcpInitialize(s.url, key);
      // The session exists once initialize has answered with its id. (A ping right after is no proof
      // worth having: on a loaded machine more than the idle second can pass before it, and the sweep
      // has rightly closed the session by then.)
      assert.equal(init.status, 200);
      const sid = init.headers.get('mcp-session-id')!;
      assert.ok(sid, 'initialize answered with a session id');
      await init.text();
      const list = () =>
        fetch(`${s.url}/api/v1/mcp`, {
          method: 'POST',
          headers: { ...headers, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }),
        });
      await new Promise((r) => setTimeout(r, 2500));
      const gone = await list();
      assert.equal(gone.status, 404, await gone.text());
    } finally {
      delete process.env.KILN_MCP_IDLE_MS;
      await client.close().catch(() => {});
      await s.close();
    }
  });
});
