/**
 * Slow clients: fastify's requestTimeout (REQUEST_TIMEOUT_S) bounds the whole time to receive a request,
 * node's headersTimeout (HEADERS_TIMEOUT_S) the headers, and this hook the time a body may stall
 * (BODY_IDLE_TIMEOUT_S): a client that stops sending mid-body loses its connection instead of holding a
 * socket (and an upload's temporary file) forever. Responses are not limited: SSE streams and long
 * synchronous waits run after the body has arrived.
 */
import type { FastifyInstance } from 'fastify';

export function installBodyIdleTimeout(app: FastifyInstance, idleMs: number): void {
  app.addHook('onRequest', (request, _reply, done) => {
    const req = request.raw;
    const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
    if (hasBody && !req.complete) {
      const socket = req.socket;
      const stalled = () => socket.destroy();
      socket.setTimeout(idleMs, stalled);
      // Only a body received in full clears it: a request answered early (401, 413) whose body still
      // trickles in keeps the limit, since node reads and discards the rest on the same socket.
      req.once('end', () => {
        socket.setTimeout(0);
        socket.removeListener('timeout', stalled);
      });
    }
    done();
  });
}
