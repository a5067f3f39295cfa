/**
 * NODE_EXTRA_CA_CERTS, read only when this process makes a TLS connection. Node 20 parses the file it
 * names (and builds its root store) while starting, before any JavaScript: ~30 ms on every `kiln …`,
 * while a local tool run never opens a TLS connection. So bin/kiln's shell part hands the variable over
 * as KILN_DEFERRED_CA_CERTS (every command but `serve`, whose process keeps node's own handling), and:
 * - restoreCaEnv() puts NODE_EXTRA_CA_CERTS back at once, so child processes inherit it unchanged;
 * - trustDeferredCa() (before any command that may reach a server) gives this process's TLS clients —
 *   fetch, undici, https, tls.connect — node's own default: its bundled roots plus the file's
 *   certificates, wherever no `ca` of their own is given. The certificates are read and parsed once, at
 *   the first TLS connection, into one shared context (a context per connection would re-parse ~300
 *   certificates each time).
 */
import { readFileSync } from 'node:fs';

let deferred: string | undefined;

export function restoreCaEnv(): void {
  const file = process.env.KILN_DEFERRED_CA_CERTS;
  delete process.env.KILN_DEFERRED_CA_CERTS;
  if (!file) return;
  deferred = file;
  process.env.NODE_EXTRA_CA_CERTS ??= file;
}

/** Options of tls.createSecureContext that change the context; without any, node's default context serves. */
const CONTEXT_OPTIONS = [
  'ca',
  'cert',
  'key',
  'pfx',
  'passphrase',
  'ciphers',
  'sigalgs',
  'crl',
  'dhparam',
  'ecdhCurve',
  'honorCipherOrder',
  'minVersion',
  'maxVersion',
  'secureOptions',
  'secureProtocol',
  'sessionIdContext',
  'ticketKeys',
  'sessionTimeout',
  'clientCertEngine',
  'privateKeyEngine',
  'privateKeyIdentifier',
  'allowPartialTrustChain',
] as const;

let installed = false;

export async function trustDeferredCa(): Promise<void> {
  if (!deferred || installed) return;
  installed = true;
  const file = deferred;
  const tls = (await import('node:tls')).default;
  const original = tls.createSecureContext;
  let ca: string[] | undefined;
  let shared: ReturnType<typeof original> | undefined;
  const extraCa = (): string[] => {
    if (ca) return ca;
    let pems: string[] = [];
    try {
      pems = readFileSync(file, 'utf8').match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
    } catch (e) {
      // Node's own words and behaviour for an unreadable file: a warning, and the bundled roots only.
      process.emitWarning(`Ignoring extra certs from \`${file}\`, load failed: ${(e as Error).message}`);
    }
    ca = [...tls.rootCertificates, ...pems];
    return ca;
  };
  tls.createSecureContext = (options?: Parameters<typeof original>[0]) => {
    if (options?.ca !== undefined) return original(options);
    const own = options && CONTEXT_OPTIONS.some((k) => options[k as keyof typeof options] !== undefined);
    if (own) return original({ ...options, ca: extraCa() });
    shared ??= original({ ca: extraCa() });
    return shared;
  };
}
