/**
 * The network a client address stands for when counting attempts and requests: an IPv4 address as it
 * is, an IPv6 address by its /64. One IPv6 host normally holds a whole /64 (SLAAC, privacy addresses,
 * a /64 routed to a server), so counting single IPv6 addresses let one client spread guesses or
 * requests over 2^64 addresses and never meet a limit. Audit records keep the full address.
 */
import { isIPv6 } from 'node:net';
import type { FastifyRequest } from 'fastify';
import { ipv6Groups, mappedIPv4 } from '../../src/core/ipv6.js';

export function clientNet(ip: string): string {
  // A zone index (fe80::1%eth0) names the interface, not the client.
  const g = isIPv6(ip.replace(/%.*$/, '')) ? ipv6Groups(ip) : undefined;
  if (!g) return ip;
  // IPv4 through an IPv6 socket (::ffff:192.0.2.1) is that IPv4 client.
  return (
    mappedIPv4(g) ??
    `${g
      .slice(0, 4)
      .map((x) => x.toString(16))
      .join(':')}::/64`
  );
}

/**
 * Whom a per-caller limit counts a request against: its user, or its client's network when it is
 * anonymous or when AUTH_ENABLED=false makes every caller the same user (counted by user, one client's
 * flood used up the rate and the streams of everyone).
 */
export function callerKey(request: FastifyRequest): string {
  return request.user && request.user.via !== 'open' ? `user:${request.user.id}` : `ip:${clientNet(request.ip)}`;
}
