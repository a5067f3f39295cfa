/**
 * Open connections, counted as they arrive: at most MAX_CONNECTIONS in all and MAX_CONNECTIONS_PER_ADDRESS
 * from one client address. The time-outs (timeouts.ts) bound how long each connection may idle or
 * trickle, but not how many there are: a few thousand sockets opened from one address and kept within
 * the limits (a header line every 29 s, an SSE stream each) held every descriptor the process may open,
 * and uploads, the database and engines then failed with EMFILE for everyone.
 *
 * A refused connection gets a short answer before any request of it is read — 429 (this address has too
 * many) or 503 (the server has too many), in the one error shape, `connection: close` — and is closed;
 * over TLS it is closed without one (nothing can be said before the handshake). Proxies (TRUST_PROXY) are
 * exempt from the per-address cap: every client behind them shares their address. A hop count or `true`
 * trusts whichever address connects, so the per-address cap is off then.
 */
import { BlockList, isIPv4, type Server, type Socket } from 'node:net';
import { KilnError } from '../../src/core/errors.js';

export interface ConnectionCapsOptions {
  /** Connections open at once in all; 0 = no cap. */
  max: number;
  /** Connections open at once from one address; 0 = no cap. */
  perAddress: number;
  /** TRUST_PROXY as configured (config.ts). */
  trustProxy: boolean | number | string;
  /** TLS: a refusal cannot be answered in HTTP before the handshake; the socket is just closed. */
  tls: boolean;
}

export interface ConnectionStats {
  open: number;
  refused: { server: number; address: number };
}

/** Named ranges TRUST_PROXY accepts besides addresses and CIDRs (as proxy-addr names them). */
const NAMED_RANGES: Record<string, string[]> = {
  loopback: ['127.0.0.0/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

/** The addresses a TRUST_PROXY list names, or undefined when it names none (false, true, a hop count). */
export function proxyList(trustProxy: boolean | number | string): BlockList | undefined {
  if (typeof trustProxy !== 'string') return undefined;
  const list = new BlockList();
  for (const part of trustProxy.split(',').map((p) => p.trim())) {
    for (const entry of NAMED_RANGES[part] ?? [part]) {
      const [addr, bits] = entry.split('/') as [string, string | undefined];
      const type = isIPv4(addr) ? 'ipv4' : 'ipv6';
      if (bits === undefined) list.addAddress(addr, type);
      else list.addSubnet(addr, Number(bits), type);
    }
  }
  return list;
}

/** A dual-stack socket's IPv4 client as `::ffff:a.b.c.d`: the IPv4 address it is. */
function plainAddress(addr: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(addr);
  return m ? m[1]! : addr;
}

/** Starts counting the server's connections; what it counted so far, for the metrics. */
export function installConnectionCaps(server: Server, o: ConnectionCapsOptions): () => ConnectionStats {
  const proxies = proxyList(o.trustProxy);
  // true or a hop count: any address may be the proxy, so no address stands for one client.
  const perAddress = o.trustProxy === false || proxies ? o.perAddress : 0;
  const byAddress = new Map<string, number>();
  const stats: ConnectionStats = { open: 0, refused: { server: 0, address: 0 } };

  // Ahead of node's own listener: a refused socket is paused before the HTTP parser attaches to it, so
  // nothing it sends is ever read as a request.
  server.prependListener('connection', (socket: Socket) => {
    const addr = plainAddress(socket.remoteAddress ?? '');
    const capped = perAddress > 0 && addr !== '' && !proxies?.check(addr, isIPv4(addr) ? 'ipv4' : 'ipv6');
    const mine = capped ? (byAddress.get(addr) ?? 0) : 0;
    if (o.max > 0 && stats.open >= o.max) {
      stats.refused.server++;
      return refuse(socket, o.tls, new KilnError('UNAVAILABLE', 'The server has too many open connections; try again shortly.'));
    }
    if (capped && mine >= perAddress) {
      stats.refused.address++;
      return refuse(
        socket,
        o.tls,
        new KilnError('RATE_LIMITED', `Too many open connections from your address (at most ${perAddress}); close some and try again.`, {
          reason: 'connections',
        }),
      );
    }
    stats.open++;
    if (capped) byAddress.set(addr, mine + 1);
    socket.once('close', () => {
      stats.open--;
      if (!capped) return;
      const n = (byAddress.get(addr) ?? 1) - 1;
      if (n > 0) byAddress.set(addr, n);
      else byAddress.delete(addr);
    });
  });
  return () => ({ open: stats.open, refused: { ...stats.refused } });
}

function refuse(socket: Socket, tls: boolean, err: KilnError): void {
  socket.pause();
  if (tls) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify(err.toJSON());
  const head = [
    `HTTP/1.1 ${err.status} ${err.status === 429 ? 'Too Many Requests' : 'Service Unavailable'}`,
    'content-type: application/json; charset=utf-8',
    `content-length: ${Buffer.byteLength(body)}`,
    'retry-after: 5',
    'connection: close',
  ];
  // Destroyed once the answer is handed to the system: whatever the client sends is never parsed.
  socket.write(`${head.join('\r\n')}\r\n\r\n${body}`, () => socket.destroy());
  socket.on('error', () => socket.destroy());
}
