/**
 * The network a client address stands for when counting attempts and requests: an IPv4 address as it
 * is, an IPv6 address by its /64. One IPv6 host normally holds a whole /64 (SLAAC, privacy addresses,
 * a /64 routed to a server), so counting single IPv6 addresses let one client spread guesses or
 * requests over 2^64 addresses and never meet a limit. Audit records keep the full address.
 */
import { isIPv4, isIPv6 } from 'node:net';

export function clientNet(ip: string): string {
  const bare = ip.replace(/%.*$/, ''); // a zone index (fe80::1%eth0) names the interface, not the client
  // IPv4 through an IPv6 socket (::ffff:192.0.2.1) is that IPv4 client.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  if (mapped && isIPv4(mapped[1]!)) return mapped[1]!;
  if (!isIPv6(bare)) return ip;
  const groups = expand(bare);
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address (an embedded IPv4 tail becomes two groups). */
function expand(ip: string): string[] {
  let text = ip.toLowerCase();
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4[1]!.split('.').map(Number) as [number, number, number, number];
    text = text.slice(0, -v4[1]!.length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const fill = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...fill, ...right];
}
