/**
 * DNS rebinding and cross-site requests. A browser that loads an attacker's page can reach a daemon on
 * 127.0.0.1 in two ways: by resolving the attacker's name to 127.0.0.1 (the request then carries
 * `Host: rebind.attacker.example`), or by posting a form across sites (it carries the attacker's
 * `Origin`). Bearer credentials never ride along with either, so with auth on they only meet a 401; with
 * AUTH_ENABLED=false every request acts as the admin and both must be refused:
 *
 * - Host: loopback names (`localhost`, `*.localhost`), IP literals (a rebinding attack always names a
 *   domain), PUBLIC_HOSTS, and the hosts of the configured SSO callback URLs.
 * - Origin, on state-changing methods: the request's own origin, or a PUBLIC_HOSTS name (a reverse proxy
 *   may rewrite Host). Requests without Origin (curl, the CLI, scripts) are not browsers' cross-site
 *   requests and pass.
 *
 * With auth on, both checks apply once PUBLIC_HOSTS is set, so an admin who names the daemon's public
 * names gets the same protection; otherwise any Host is served (a daemon reached by changing addresses).
 */
import net from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { KilnError } from '../../src/core/errors.js';
import type { DaemonConfig } from '../config.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** Posted across sites by design: the SAML identity provider's form post (its signature is the check). */
const CROSS_SITE_ROUTES = new Set(['/api/auth/saml/callback']);

/** `example.com`, `[::1]`, `127.0.0.1` from a Host header value (port dropped, lower case). */
export function hostnameOf(host: string): string {
  const h = host.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(0, h.indexOf(']') + 1);
  return h.split(':', 1)[0]!.replace(/\.$/, '');
}

function isIpLiteral(hostname: string): boolean {
  return net.isIP(hostname.replace(/^\[|\]$/g, '')) !== 0;
}

export class HostPolicy {
  /** Names allowed besides loopback names and IP literals (lower case, no port). */
  readonly names: Set<string>;
  readonly enforced: boolean;

  constructor(config: Pick<DaemonConfig, 'authEnabled' | 'publicHosts' | 'accounts'>) {
    const derived = [config.accounts.oidc?.redirectUrl, config.accounts.saml?.callbackUrl].flatMap((u) => {
      try {
        return u ? [hostnameOf(new URL(u).host)] : [];
      } catch {
        return [];
      }
    });
    this.names = new Set([...config.publicHosts.map(hostnameOf), ...derived]);
    this.enforced = !config.authEnabled || config.publicHosts.length > 0;
  }

  hostAllowed(host: string): boolean {
    // HTTP/1.0 without Host: no browser sends that.
    if (!host) return true;
    const name = hostnameOf(host);
    return name === 'localhost' || name.endsWith('.localhost') || isIpLiteral(name) || this.names.has(name);
  }

  originAllowed(origin: string, host: string): boolean {
    let u: URL;
    try {
      u = new URL(origin);
    } catch {
      // `null` (sandboxed frames, file: pages) and garbage are foreign.
      return false;
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return false;
    let own: URL | undefined;
    try {
      own = new URL(`${u.protocol}//${host}`);
    } catch {
      own = undefined;
    }
    return (own !== undefined && own.host === u.host) || this.names.has(hostnameOf(u.host));
  }

  /** Throws FORBIDDEN (reason host-not-allowed / cross-origin) for a request the policy refuses. */
  check(request: FastifyRequest): void {
    if (!this.enforced) return;
    const host = request.host;
    if (!this.hostAllowed(host))
      throw new KilnError(
        'FORBIDDEN',
        `The host name "${hostnameOf(host)}" is not one this daemon answers to. Use 127.0.0.1 or localhost, or add the name to PUBLIC_HOSTS.`,
        { reason: 'host-not-allowed' },
      );
    const origin = request.headers.origin;
    if (origin === undefined || SAFE_METHODS.has(request.method)) return;
    if (CROSS_SITE_ROUTES.has(request.routeOptions.url ?? '')) return;
    if (!this.originAllowed(origin, host))
      throw new KilnError(
        'FORBIDDEN',
        `Cross-site request refused: Origin ${origin} is not this daemon. Send it from the daemon's own pages, or add the site's host name to PUBLIC_HOSTS.`,
        { reason: 'cross-origin' },
      );
  }
}

/** First of the onRequest hooks: refused requests are answered before credentials or bodies are read. */
export function installHostGuard(app: FastifyInstance, config: DaemonConfig): HostPolicy {
  const policy = new HostPolicy(config);
  app.addHook('onRequest', async (request) => policy.check(request));
  return policy;
}
