/** OpenAPI entries of /api/v1/mcp: one JSON-RPC endpoint of the MCP Streamable HTTP transport. */
type Json = Record<string, unknown>;

export const MCP_TAGS = ['mcp'];

const session = {
  name: 'mcp-session-id',
  in: 'header',
  required: false,
  schema: { type: 'string' },
  description: 'The session id the initialize answer gave (header Mcp-Session-Id); absent on the initialize request.',
};

const errors = {
  '400': { $ref: '#/components/responses/Error400' },
  '401': { $ref: '#/components/responses/Error401' },
  '403': { $ref: '#/components/responses/Error403' },
  '404': { $ref: '#/components/responses/Error404' },
};

export function mcpPaths(): Json {
  const description =
    'The Model Context Protocol (Streamable HTTP transport, protocol 2025-06-18): every tool and preset is an MCP tool of the same id. ' +
    'Inputs are library file ids or http(s) URLs; each call is an ordinary job; results carry download URLs. docs/MCP.md has the details.';
  return {
    '/api/v1/mcp': {
      post: {
        operationId: 'mcpMessage',
        tags: MCP_TAGS,
        summary: 'Send MCP JSON-RPC messages (initialize, tools/list, tools/call, notifications).',
        description,
        parameters: [session],
        requestBody: { required: true, content: { 'application/json': { schema: { type: 'object' } } } },
        responses: {
          '200': {
            description:
              'The JSON-RPC answer, as JSON or as a stream of server-sent events carrying progress notifications and the answer.',
            content: { 'application/json': { schema: { type: 'object' } }, 'text/event-stream': { schema: { type: 'string' } } },
          },
          '202': { description: 'A notification or response was accepted.' },
          ...errors,
        },
      },
      get: {
        operationId: 'mcpStream',
        tags: MCP_TAGS,
        summary: 'Open the session stream for server-initiated messages.',
        parameters: [session],
        responses: {
          '200': { description: 'Server-sent events.', content: { 'text/event-stream': { schema: { type: 'string' } } } },
          ...errors,
        },
      },
      delete: {
        operationId: 'mcpClose',
        tags: MCP_TAGS,
        summary: 'End an MCP session.',
        parameters: [session],
        responses: { '200': { description: 'The session is closed.' }, ...errors },
      },
    },
  };
}
