/**
 * A TCP relay on a port of its own in front of `host:port`, for tests of what clients do when the
 * connection is cut: cut() drops every connection and refuses new ones until mend(); `cutAfterMs` closes
 * each connection that long after it opened (a proxy or CDN that caps a response's duration).
 */
import net from 'node:net';

export interface TcpRelay {
  port: number;
  /** Connections made through the relay so far. */
  connections(): number;
  cut(): void;
  mend(): void;
  close(): Promise<void>;
}

export async function tcpRelay(host: string, port: number, opts: { cutAfterMs?: number } = {}): Promise<TcpRelay> {
  let n = 0;
  let open = true;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    if (!open) return void client.destroy();
    n++;
    const up = net.connect(port, host);
    for (const s of [client, up]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => {
        sockets.delete(s);
        client.destroy();
        up.destroy();
      });
    }
    client.pipe(up).pipe(client);
    if (opts.cutAfterMs !== undefined) setTimeout(() => client.destroy(), opts.cutAfterMs).unref();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    connections: () => n,
    cut() {
      open = false;
      for (const s of sockets) s.destroy();
    },
    mend() {
      open = true;
    },
    close: () =>
      new Promise((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
