/**
 * tools/call naming a tool the server does not list, answered as the SDK's own McpServer (the version
 * in node_modules) answers it: McpServer throws McpError -32602 "Tool … not found" and its own catch
 * turns that into a result with isError, so an agent reads the message and picks another tool. kiln's
 * result says the same with the code NOT_FOUND. Should a later SDK answer with a JSON-RPC error instead
 * (the MCP spec's tools page lists an unknown tool among protocol errors), the first test fails and
 * kiln's server is to follow it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { z } from 'zod';
import { catalogEntries } from '../../src/mcp/catalog.js';
import { createMcpServer } from '../../src/mcp/server.js';

type Answer = { error: { code: number; message: string } } | { result: Record<string, any> };

/** What a client gets for tools/call `name`: the result, or the JSON-RPC error it threw. */
async function call(server: Server | McpServer, name: string): Promise<Answer> {
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(clientSide);
  try {
    return { result: await client.callTool({ name, arguments: {} }) };
  } catch (e) {
    return { error: e as { code: number; message: string } };
  } finally {
    await client.close();
  }
}

describe('MCP tools/call of an unknown tool', () => {
  it("the SDK's McpServer answers a result with isError (-32602 in its text), not a JSON-RPC error", async () => {
    const sdk = new McpServer({ name: 'sdk', version: '1' });
    sdk.registerTool('resize', { inputSchema: { width: z.number() } }, async () => ({ content: [{ type: 'text', text: 'ok' }] }));
    const answer = await call(sdk, 'rotate');
    assert.ok('result' in answer, `a JSON-RPC error: ${JSON.stringify(answer)}`);
    assert.equal(answer.result.isError, true);
    assert.match(answer.result.content[0].text, /-32602.*Tool rotate not found/);
  });

  it('kiln answers the same way, with NOT_FOUND: a catalog tool left out by --tools, and a name no tool has', async () => {
    for (const name of ['rotate', 'no-such-tool']) {
      const server = createMcpServer({
        entries: catalogEntries({ tools: /^resize$/ }),
        refs: 'paths',
        run: () => assert.fail(`${name} must not run`),
      });
      const answer = await call(server, name);
      assert.ok('result' in answer, `a JSON-RPC error: ${JSON.stringify(answer)}`);
      assert.equal(answer.result.isError, true);
      assert.deepEqual(answer.result.structuredContent, {
        ok: false,
        error: { code: 'NOT_FOUND', message: `No tool named ${name}; tools/list names them.` },
      });
      assert.equal(answer.result.content[0].text, `NOT_FOUND: No tool named ${name}; tools/list names them.`);
    }
  });
});
