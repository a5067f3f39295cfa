/**
 * Event streams open at once per caller (MAX_STREAMS_PER_USER): the user, or the client's address when
 * anonymous or when AUTH_ENABLED=false makes every caller the same user (an IPv6 client by its /64,
 * client-net.ts). A stream holds a socket, a subscription and a heartbeat timer for as long as its
 * client keeps it; the connection caps (connection-caps.ts) bound them per address, but one API key used
 * from many addresses, or from behind a proxy that the per-address cap exempts, opened as many streams
 * as it liked. The stream past the cap is answered 429 (RATE_LIMITED, reason `streams`) with
 * Retry-After, before its headers are sent; a stream that ends gives its place back. Per instance.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { KilnError } from '../../src/core/errors.js';
import { callerKey } from './client-net.js';

export interface StreamStats {
  open: number;
  refused: number;
}

/** The Retry-After of a refusal: streams end when their jobs do, so a retry soon may find a place. */
const RETRY_AFTER_S = 5;

export class StreamCaps {
  private readonly byCaller = new Map<string, number>();
  private readonly counts: StreamStats = { open: 0, refused: 0 };

  /** `perCaller`: streams open at once per caller; 0 = no cap. */
  constructor(private readonly perCaller: number) {}

  /**
   * Takes a place for the stream `request` is about to open, given back when its response closes; throws
   * 429 when the caller already holds as many as the cap allows.
   */
  hold(request: FastifyRequest, reply: FastifyReply): void {
    const key = callerKey(request);
    const mine = this.byCaller.get(key) ?? 0;
    if (this.perCaller > 0 && mine >= this.perCaller) {
      this.counts.refused++;
      void reply.header('retry-after', String(RETRY_AFTER_S));
      throw new KilnError(
        'RATE_LIMITED',
        `Too many event streams open at once (at most ${this.perCaller}, MAX_STREAMS_PER_USER); close some and try again.`,
        { reason: 'streams', details: { retryAfterSeconds: RETRY_AFTER_S, limit: this.perCaller } },
      );
    }
    this.byCaller.set(key, mine + 1);
    this.counts.open++;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.counts.open--;
      const n = (this.byCaller.get(key) ?? 1) - 1;
      if (n > 0) this.byCaller.set(key, n);
      else this.byCaller.delete(key);
    };
    reply.raw.once('close', release);
    // A client gone while its request was checked: 'close' has fired already and would never come.
    if (reply.raw.closed || reply.raw.destroyed || request.raw.socket?.destroyed) release();
  }

  stats(): StreamStats {
    return { ...this.counts };
  }
}
