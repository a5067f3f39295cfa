/**
 * How the CLI reaches a server safely: never plain http to another machine unless told so
 * (--insecure-http), and https either through the system's certificate authorities or through a
 * certificate fingerprint pinned by `kiln login` (trust on first use, as ssh does with host keys: a
 * kiln daemon with TLS_SELF_SIGNED=true prints the fingerprint it is serving at start-up).
 */
import net from 'node:net';
import tls from 'node:tls';
import type { Dispatcher } from 'undici';
import { KilnError } from '../../core/errors.js';
import { checkPlainHttp, isLoopbackHost } from './plain-http.js';

export { checkPlainHttp, isLoopbackHost };

/** `AB:CD:…` (64 hex digits, as node and `kiln serve` print it) from any spelling of a SHA-256 fingerprint. */
export function normalizeFingerprint(raw: string): string {
  const hex = raw
    .trim()
    .replace(/^sha-?256[:=\s]*/i, '')
    .replace(/[:\s]/g, '')
    .toUpperCase();
  if (!/^[0-9A-F]{64}$/.test(hex))
    throw new KilnError('USAGE_ERROR', `Not a SHA-256 certificate fingerprint: ${raw} (64 hex digits, colons optional).`);
  return hex.match(/../g)!.join(':');
}

export interface PeerCertificate {
  /** Signed by an authority this machine trusts, for this host name. */
  authorized: boolean;
  authorizationError?: string;
  fingerprint: string;
}

/** Opens a TLS connection to an https server only to look at its certificate. */
export function probeCertificate(server: string, timeoutMs = 15_000): Promise<PeerCertificate> {
  const u = new URL(server);
  const host = u.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve, reject) => {
    const socket = tls.connect({
      host,
      port: Number(u.port || 443),
      // SNI takes names only.
      ...(net.isIP(host) ? {} : { servername: host }),
      // Looked at, not trusted: the caller decides (and nothing is sent on this connection).
      rejectUnauthorized: false,
      timeout: timeoutMs,
    });
    socket.once('secureConnect', () => {
      const cert = socket.getPeerCertificate();
      const answer: PeerCertificate = {
        authorized: socket.authorized,
        authorizationError: socket.authorizationError ? String(socket.authorizationError) : undefined,
        fingerprint: cert.fingerprint256,
      };
      socket.end();
      resolve(answer);
    });
    socket.once('timeout', () => {
      socket.destroy();
      reject(new KilnError('UNAVAILABLE', `Cannot reach ${u.host}: no TLS answer within ${timeoutMs / 1000} s.`));
    });
    socket.once('error', (e: NodeJS.ErrnoException) =>
      reject(new KilnError('UNAVAILABLE', `Cannot reach the kiln server at ${server} over TLS (${e.code ?? e.message}).`, { cause: e })),
    );
  });
}

export function changedPinError(server: string, pinned: string, offered: string): KilnError {
  return new KilnError(
    'FORBIDDEN',
    `The TLS certificate of ${server} has changed: its SHA-256 fingerprint is ${offered}, but ${pinned} was pinned at login. Someone may be intercepting the connection; nothing was sent. If the certificate was replaced on purpose, check the new fingerprint on the server (kiln serve prints it at start-up) and pin it: kiln login ${server} --tls-fingerprint ${offered}`,
    { reason: 'tls-fingerprint-changed' },
  );
}

/**
 * An undici dispatcher that accepts exactly the pinned certificate: the chain is not checked against
 * authorities (a self-signed certificate has none), the fingerprint of what the server presents is —
 * on every connection, before any request (with its key) is written.
 */
export async function pinnedDispatcher(server: string, pin: string): Promise<Dispatcher> {
  const { Agent, buildConnector } = await import('undici');
  // No TLS session resumption: a resumed session presents no certificate to check.
  const base = buildConnector({ rejectUnauthorized: false, maxCachedSessions: 0 });
  return new Agent({
    connect(opts, callback) {
      base(opts, (err, socket) => {
        if (err || !socket) return callback(err ?? new Error('no socket'), null);
        const offered = (socket as tls.TLSSocket).getPeerCertificate?.()?.fingerprint256;
        if (offered !== pin) {
          socket.destroy();
          return callback(changedPinError(server, pin, offered ?? 'none (not TLS)'), null);
        }
        callback(null, socket);
      });
    },
  });
}

/** What to say when an https connection without a pin fails its certificate check. */
export function untrustedCertificateError(server: string, code: string, cause: unknown): KilnError | undefined {
  if (!/CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS_CERT_ALTNAME/i.test(code)) return undefined;
  return new KilnError(
    'FORBIDDEN',
    `The TLS certificate of ${server} is not trusted by this machine (${code}). For a kiln daemon with a self-signed certificate, run kiln login ${server}: it shows the certificate's fingerprint and pins it for this profile.`,
    { reason: 'tls-untrusted', cause },
  );
}

/**
 * `kiln login`'s decision for a server: plain http only to this machine or with --insecure-http; an
 * https certificate an authority vouches for needs no pin; any other is pinned — the one pinned before
 * for this profile and server, or the one given with --tls-fingerprint, or, on first use, the one shown
 * to the user and accepted (a person at a terminal, or a "yes" line on stdin).
 */
export async function loginTransport(
  server: string,
  o: { tlsFingerprint?: string; insecureHttp?: boolean; pinned?: string },
  confirm: (question: string) => Promise<boolean>,
): Promise<{ pin?: string; insecureHttp?: boolean }> {
  const u = new URL(server);
  if (u.protocol === 'http:') {
    if (o.tlsFingerprint) throw new KilnError('USAGE_ERROR', '--tls-fingerprint pins an https certificate; this server URL is http.');
    checkPlainHttp(server, o.insecureHttp === true);
    return { insecureHttp: !isLoopbackHost(u.hostname) || undefined };
  }
  const wanted = o.tlsFingerprint ? normalizeFingerprint(o.tlsFingerprint) : undefined;
  const peer = await probeCertificate(server);
  if (wanted) {
    if (wanted !== peer.fingerprint)
      throw new KilnError(
        'FORBIDDEN',
        `The TLS certificate of ${server} has the SHA-256 fingerprint ${peer.fingerprint}, not ${wanted}; nothing was sent.`,
        { reason: 'tls-fingerprint-mismatch' },
      );
    return { pin: wanted };
  }
  if (peer.authorized) return {};
  if (o.pinned) {
    if (o.pinned !== peer.fingerprint) throw changedPinError(server, o.pinned, peer.fingerprint);
    return { pin: o.pinned };
  }
  process.stderr.write(
    `The TLS certificate of ${u.host} is not signed by an authority this machine trusts (${peer.authorizationError ?? 'unknown issuer'}).\n` +
      `Its SHA-256 fingerprint is:\n  ${peer.fingerprint}\n` +
      'Compare it with the fingerprint the daemon printed at start-up (kiln serve), then accept it to pin it for this profile.\n',
  );
  if (!(await confirm('Trust this certificate? (yes/no): ')))
    throw new KilnError('FORBIDDEN', `The certificate of ${server} was not accepted; nothing was sent.`, { reason: 'tls-untrusted' });
  return { pin: peer.fingerprint };
}
