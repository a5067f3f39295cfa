/**
 * A request rate limit per caller (callerKey: the user, or the address when anonymous or when
 * AUTH_ENABLED=false makes every caller one user; an IPv6 one by its /64,
 * client-net.ts): a token bucket per key
 * holding a minute's worth of tokens, refilled at that rate, so a burst up to a minute's worth passes
 * and a steady flood is answered 429 with Retry-After. The rate is live (rateLimitPerMinute: settings,
 * the user's team, RATE_LIMIT_PER_MINUTE). Kept in memory per instance (a limit behind a load balancer
 * is per instance). Health probes are not counted.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { KilnError } from '../../src/core/errors.js';
import { callerKey } from './client-net.js';

export const EXEMPT = new Set(['/api/v1/health', '/api/v1/readyz']);
const MAX_KEYS = 50_000;

interface Bucket {
  tokens: number;
  at: number;
  /** The rate the bucket was last filled at (a live change applies from the next request). */
  perMinute: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly rateOf: (request: FastifyRequest) => number;

  /**
   * `perMinute`: a fixed rate, or the caller's rate now. `label`: what is counted and where its rate
   * comes from, for the 429's message.
   */
  constructor(
    perMinute: number | ((request: FastifyRequest) => number),
    private readonly label = { counted: 'requests', source: 'the rateLimitPerMinute setting; RATE_LIMIT_PER_MINUTE by default' },
  ) {
    this.rateOf = typeof perMinute === 'number' ? () => perMinute : perMinute;
  }

  /** 0 when the request may go on, else the seconds until it may. */
  take(key: string, perMinute: number, now = Date.now()): number {
    const rate = perMinute / 60_000;
    let b = this.buckets.get(key);
    if (!b) {
      if (this.buckets.size >= MAX_KEYS) this.prune(now);
      b = { tokens: perMinute, at: now, perMinute };
      this.buckets.set(key, b);
    }
    b.tokens = Math.min(perMinute, b.tokens + (now - b.at) * rate);
    b.at = now;
    b.perMinute = perMinute;
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / rate / 1000));
  }

  /** Drops buckets that have refilled (they hold nothing a new bucket would not). */
  private prune(now: number): void {
    for (const [k, b] of this.buckets) if (b.tokens + (now - b.at) * (b.perMinute / 60_000) >= b.perMinute) this.buckets.delete(k);
  }

  check(request: FastifyRequest, reply: FastifyReply): void {
    const perMinute = this.rateOf(request);
    if (perMinute <= 0 || EXEMPT.has(request.routeOptions.url ?? '')) return;
    const key = callerKey(request);
    const wait = this.take(key, perMinute);
    if (wait > 0) {
      void reply.header('retry-after', String(wait));
      throw new KilnError(
        'RATE_LIMITED',
        `Too many ${this.label.counted}: at most ${perMinute} a minute (${this.label.source}). Try again in ${wait} s.`,
        {
          details: { retryAfterSeconds: wait, limitPerMinute: perMinute },
        },
      );
    }
  }
}
