/**
 * `Expect: 100-continue` (RFC 9110 §10.1.1): the client waits for "100 Continue" before sending a
 * large body (curl does above 1 MB), so that a request refused from its headers costs no upload. Node
 * answered 100 at once, before any check: an upload without credentials, to a path that does not
 * exist, over the rate, or declaring more bytes than MAX_REQUEST_MB was sent whole (up to 64 MB read
 * and dropped, or to the end) before its 401/404/429/413. The 100 now goes out once the onRequest
 * checks (host, credentials, rate, route) have passed, just before the body is read; a refusal comes
 * instead of it.
 */
import type { FastifyInstance } from 'fastify';
import { KilnError } from '../../src/core/errors.js';

export function installExpectContinue(app: FastifyInstance, maxRequestMb: number): void {
  // With a listener, node leaves the 100 to us and passes the request on only when told.
  app.server.on('checkContinue', (req, res) => app.server.emit('request', req, res));
  app.addHook('preParsing', async (request, reply) => {
    if (!/100-continue/i.test(request.headers.expect ?? '') || reply.raw.headersSent) return;
    const declared = Number(request.headers['content-length'] ?? 0);
    // The tool routes read multipart bodies up to MAX_REQUEST_MB (http/uploads.ts).
    if (request.url.startsWith('/api/v1/tools/') && declared > maxRequestMb * 1048576) {
      // The body will not come: the connection cannot be reused for a next request.
      reply.header('connection', 'close');
      throw new KilnError('LIMIT_EXCEEDED', `The request is larger than the limit of ${maxRequestMb} MB (MAX_REQUEST_MB).`, {
        details: { limitMb: maxRequestMb },
      });
    }
    reply.raw.writeContinue();
  });
}
