/**
 * How a deployed daemon is reached (issue #21): never plain http across the network by default.
 *
 * - self-signed (the default): the daemon makes its own certificate (TLS_SELF_SIGNED=true); its
 *   fingerprint is read back over SSH — a channel already authenticated by the host key — and the
 *   login line carries it (`kiln login https://… --tls-fingerprint …`), so the pin is never a guess.
 * - cert: the admin's certificate and key (--tls-cert, --tls-key) are uploaded into the data dir (0600)
 *   and named by TLS_CERT_FILE / TLS_KEY_FILE.
 * - proxy: the daemon listens on 127.0.0.1 only, behind the admin's TLS reverse proxy at the given
 *   https URL (PUBLIC_HOSTS and TRUST_PROXY set to match).
 * - http: plain http as before, only with --insecure-http.
 */
import { X509Certificate } from 'node:crypto';
import { existsSync } from 'node:fs';
import { KilnError } from '../../core/errors.js';

export type TransportPlan =
  | { kind: 'self-signed' }
  | { kind: 'cert'; certFile: string; keyFile: string }
  | { kind: 'proxy'; url: URL }
  | { kind: 'http' };

type Opts = Record<string, string | boolean | string[] | undefined>;

export function planTransport(o: Opts): TransportPlan {
  const cert = o.tlsCert as string | undefined;
  const key = o.tlsKey as string | undefined;
  const proxy = o.behindProxy as string | undefined;
  const chosen = [cert || key ? '--tls-cert/--tls-key' : '', proxy ? '--behind-proxy' : '', o.insecureHttp ? '--insecure-http' : ''].filter(
    Boolean,
  );
  if (chosen.length > 1) throw new KilnError('USAGE_ERROR', `Choose one way to serve: ${chosen.join(' or ')}.`);
  if (cert || key) {
    if (!cert || !key) throw new KilnError('USAGE_ERROR', '--tls-cert and --tls-key go together (the certificate and its key, PEM).');
    for (const f of [cert, key]) if (!existsSync(f)) throw new KilnError('USAGE_ERROR', `No file ${f}.`);
    return { kind: 'cert', certFile: cert, keyFile: key };
  }
  if (proxy) {
    let url: URL;
    try {
      url = new URL(proxy);
    } catch {
      throw new KilnError('USAGE_ERROR', `--behind-proxy takes the https URL the proxy serves (got ${proxy}).`);
    }
    if (url.protocol !== 'https:')
      throw new KilnError('USAGE_ERROR', `--behind-proxy takes the https URL the proxy serves (got ${proxy}): the proxy terminates TLS.`);
    return { kind: 'proxy', url };
  }
  return o.insecureHttp ? { kind: 'http' } : { kind: 'self-signed' };
}

/** Where the uploaded certificate and key go on the remote. */
export function remoteCertPaths(dataDir: string): { cert: string; key: string } {
  return { cert: `${dataDir}/tls/given-cert.pem`, key: `${dataDir}/tls/given-key.pem` };
}

/** The daemon settings of the plan, and the address it listens on (a proxy's backend is loopback only). */
export function transportSettings(plan: TransportPlan, dataDir: string, host: string): { host: string; env: [string, string][] } {
  switch (plan.kind) {
    case 'self-signed':
      return { host, env: [['TLS_SELF_SIGNED', 'true']] };
    case 'cert': {
      const p = remoteCertPaths(dataDir);
      return {
        host,
        env: [
          ['TLS_CERT_FILE', p.cert],
          ['TLS_KEY_FILE', p.key],
        ],
      };
    }
    case 'proxy':
      return {
        host: '127.0.0.1',
        env: [
          ['PUBLIC_HOSTS', plan.url.hostname],
          ['TRUST_PROXY', 'loopback'],
        ],
      };
    case 'http':
      return { host, env: [] };
  }
}

export function fingerprintOf(pem: string): string {
  try {
    return new X509Certificate(pem).fingerprint256;
  } catch (e) {
    throw new KilnError('UNAVAILABLE', `The daemon's certificate could not be read back: ${(e as Error).message}`, { cause: e });
  }
}

/** The command that signs in to the deployed daemon. */
export function loginLine(plan: TransportPlan, shownHost: string, port: number, fingerprint?: string): string {
  const host = shownHost.includes(':') ? `[${shownHost}]` : shownHost;
  switch (plan.kind) {
    case 'proxy':
      return `kiln login ${plan.url.origin}`;
    case 'http':
      return `kiln login http://${host}:${port} --insecure-http`;
    case 'self-signed':
      return `kiln login https://${host}:${port}${fingerprint ? ` --tls-fingerprint ${fingerprint}` : ''}`;
    case 'cert':
      return `kiln login https://${host}:${port}`;
  }
}
