/**
 * Slow clients: fastify's requestTimeout (REQUEST_TIMEOUT_S) bounds the whole time to receive a request,
 * node's headersTimeout (HEADERS_TIMEOUT_S) the headers, and this hook what a body may do on the way:
 *
 * - stall (BODY_IDLE_TIMEOUT_S): a client that stops sending mid-body loses its connection instead of
 *   holding a socket (and an upload's temporary file) forever;
 * - trickle (MIN_BODY_RATE_BPS over BODY_RATE_WINDOW_S): a byte every 59 s never stalled, and held a
 *   socket for the whole REQUEST_TIMEOUT_S (an hour) — also on the public routes (a login body declared
 *   10 MB), so a few hundred such connections from one address could take every socket the process may
 *   open. A window in which the daemon itself held the body back (its reader paused, bytes waiting in
 *   the request's buffer) does not count against the client;
 * - go on after the answer (EARLY_ANSWER_LINGER_MS): node reads and drops the rest of a body the daemon
 *   answered early (401 before an upload, 413, 429) so that the client can read the answer — closing at
 *   once would reset the connection and could lose it — but only this long, then the socket closes.
 *
 * Responses are not limited: SSE streams and long synchronous waits run after the body has arrived.
 */
import type { FastifyInstance } from 'fastify';

/** Time an early-answered request's body is still read and dropped before the connection closes. */
export const EARLY_ANSWER_LINGER_MS = 5000;

export interface SlowBodyLimits {
  idleMs: number;
  /** Bytes a second a body must average over each window; 0 = no minimum. */
  minRateBps: number;
  windowMs: number;
}

export function installSlowBodyGuards(app: FastifyInstance, limits: SlowBodyLimits): void {
  app.addHook('onRequest', (request, reply, done) => {
    const req = request.raw;
    const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
    if (!hasBody || req.complete) return done();
    const socket = req.socket;
    const cut = () => socket.destroy();
    socket.setTimeout(limits.idleMs, cut);
    let rate: NodeJS.Timeout | undefined;
    if (limits.minRateBps > 0) {
      const least = (limits.minRateBps * limits.windowMs) / 1000;
      let from = socket.bytesRead;
      rate = setInterval(() => {
        const got = socket.bytesRead - from;
        from = socket.bytesRead;
        // The daemon not reading yet (an Expect: 100-continue upload before its checks), its reader
        // paused, or bytes read but not yet taken: the client was not the slow side in this window.
        const heldBack = req.readableFlowing !== true || req.readableLength > 0;
        if (got < least && !heldBack) cut();
      }, limits.windowMs);
      rate.unref();
    }
    let linger: NodeJS.Timeout | undefined;
    reply.raw.once('finish', () => {
      if (req.complete) return;
      linger = setTimeout(cut, EARLY_ANSWER_LINGER_MS);
      linger.unref();
    });
    const clear = () => {
      socket.setTimeout(0);
      socket.removeListener('timeout', cut);
      clearInterval(rate);
      clearTimeout(linger);
      // A keep-alive socket carries many requests: no listener of this one may stay on it.
      socket.removeListener('close', clear);
      req.removeListener('end', clear);
    };
    // Only a body received in full (or a closed socket) clears them: a request answered early (401,
    // 413) whose body still trickles in keeps them, since node reads and discards the rest on the socket.
    req.once('end', clear);
    socket.once('close', clear);
    done();
  });
}
