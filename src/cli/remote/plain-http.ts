/**
 * The rule for plain http (no TLS): only to this machine unless the user says otherwise. Apart from
 * transport.ts so that resolving a profile's server (every tool run) does not load node:tls.
 */
import net from 'node:net';
import { KilnError } from '../../core/errors.js';

export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h.endsWith('.localhost') || h === '::1' || (net.isIPv4(h) && h.startsWith('127.'));
}

/** Plain http only to this machine, unless the user says otherwise: keys and passwords would cross the network readable. */
export function checkPlainHttp(server: string, allowed: boolean): void {
  const u = new URL(server);
  if (u.protocol !== 'http:' || allowed || isLoopbackHost(u.hostname)) return;
  const https = new URL(server);
  https.protocol = 'https:';
  throw new KilnError(
    'USAGE_ERROR',
    `Refusing plain http to ${u.host}: the password and the API key would cross the network readable. Use ${https.toString().replace(/\/$/, '')} (serve with TLS_SELF_SIGNED=true or TLS_CERT_FILE/TLS_KEY_FILE, or behind a TLS proxy), or pass --insecure-http if this network is trusted.`,
    { reason: 'insecure-http' },
  );
}
