/**
 * HTTPS for the daemon: a certificate and key the admin gives (TLS_CERT_FILE, TLS_KEY_FILE), or one the
 * daemon makes for itself (TLS_SELF_SIGNED=true) and keeps in DATA_DIR/tls (0600). A self-signed
 * certificate is trusted by pinning: `kiln serve` prints its SHA-256 fingerprint at start-up and
 * `kiln login` pins it on first use, as ssh does with host keys. It is made once and reused, so the pin
 * holds across restarts; a new one is made only when it has expired (clients then refuse it until
 * they are told the new fingerprint).
 */
import { createPrivateKey, generateKeyPairSync, randomBytes, X509Certificate } from 'node:crypto';
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { KilnError } from '../../src/core/errors.js';
import type { DaemonConfig } from '../config.js';

export interface TlsMaterial {
  key: string;
  cert: string;
  /** SHA-256 of the certificate, `AB:CD:…` (what `kiln login` pins). */
  fingerprint: string;
  selfSigned: boolean;
  certFile: string;
}

const VALID_DAYS = 5 * 365;

export function selfSignedDir(dataDir: string): string {
  return path.join(dataDir, 'tls');
}

async function readPem(file: string, what: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (e) {
    throw new KilnError('USAGE_ERROR', `Cannot read the TLS ${what} ${file}: ${(e as Error).message}`, { cause: e });
  }
}

/** Checks that `cert` is a certificate and `key` its private key; answers the fingerprint. */
function checkPair(cert: string, key: string, where: string): string {
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch (e) {
    throw new KilnError('USAGE_ERROR', `${where}: not a PEM certificate (${(e as Error).message}).`, { cause: e });
  }
  let matches = false;
  try {
    matches = x509.checkPrivateKey(createPrivateKey(key));
  } catch (e) {
    throw new KilnError('USAGE_ERROR', `${where}: the key is not a PEM private key (${(e as Error).message}).`, { cause: e });
  }
  if (!matches) throw new KilnError('USAGE_ERROR', `${where}: the key does not belong to the certificate.`);
  return x509.fingerprint256;
}

/** Names a client may use for this daemon: they go into the self-signed certificate's SANs. */
function altNames(config: Pick<DaemonConfig, 'host' | 'publicHosts'>): { dns: string[]; ips: string[] } {
  const dns = new Set(['localhost', os.hostname().toLowerCase()]);
  const ips = new Set(['127.0.0.1', '::1']);
  for (const h of [config.host, ...config.publicHosts]) {
    const bare = h.replace(/^\[|\]$/g, '');
    if (net.isIP(bare)) {
      if (bare !== '0.0.0.0' && bare !== '::') ips.add(bare);
    } else if (bare) dns.add(bare.toLowerCase());
  }
  return { dns: [...dns], ips: [...ips] };
}

/** A new RSA-2048 key (node's crypto) and a certificate for it signed by itself (node-forge). */
export async function makeSelfSigned(config: Pick<DaemonConfig, 'host' | 'publicHosts'>): Promise<{ key: string; cert: string }> {
  const { default: forge } = await import('node-forge');
  const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(pair.publicKey.export({ type: 'spki', format: 'pem' }).toString());
  // Positive, 16 random bytes: unique enough that no client confuses two daemons' certificates.
  cert.serialNumber = `01${randomBytes(15).toString('hex')}`;
  const now = Date.now();
  cert.validity.notBefore = new Date(now - 24 * 3_600_000);
  cert.validity.notAfter = new Date(now + VALID_DAYS * 24 * 3_600_000);
  const subject = [{ name: 'commonName', value: `kiln on ${os.hostname()}`.slice(0, 64) }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  const names = altNames(config);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
    { name: 'extKeyUsage', serverAuth: true },
    {
      name: 'subjectAltName',
      altNames: [...names.dns.map((value) => ({ type: 2, value })), ...names.ips.map((ip) => ({ type: 7, ip }))],
    },
  ]);
  cert.sign(forge.pki.privateKeyFromPem(pair.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString()), forge.md.sha256.create());
  return { key: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), cert: forge.pki.certificateToPem(cert) };
}

async function writePrivate(file: string, data: string): Promise<void> {
  await writeFile(`${file}.tmp`, data, { mode: 0o600 });
  await chmod(`${file}.tmp`, 0o600);
  await rename(`${file}.tmp`, file);
}

/** The self-signed certificate in the data dir, made on first use (or when it has expired). */
async function selfSigned(config: DaemonConfig): Promise<TlsMaterial> {
  const dir = selfSignedDir(config.dataDir);
  const certFile = path.join(dir, 'cert.pem');
  const keyFile = path.join(dir, 'key.pem');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  const existing = await Promise.all([readFile(certFile, 'utf8'), readFile(keyFile, 'utf8')]).catch(() => undefined);
  if (existing) {
    const [cert, key] = existing;
    // A pair that does not match (a crash between the two writes) or has expired is made again.
    const fingerprint = (() => {
      try {
        return checkPair(cert, key, certFile);
      } catch {
        return undefined;
      }
    })();
    if (fingerprint && new Date(new X509Certificate(cert).validTo).getTime() > Date.now()) {
      await chmod(keyFile, 0o600);
      return { key, cert, fingerprint, selfSigned: true, certFile };
    }
  }
  const made = await makeSelfSigned(config);
  // Key first: a crash in between leaves a pair that fails checkPair and is made again, never served.
  await writePrivate(keyFile, made.key);
  await writePrivate(certFile, made.cert);
  return { ...made, fingerprint: checkPair(made.cert, made.key, certFile), selfSigned: true, certFile };
}

/** The daemon's TLS material, or undefined for plain HTTP. */
export async function loadTls(config: DaemonConfig): Promise<TlsMaterial | undefined> {
  const { tlsCertFile, tlsKeyFile } = config;
  if (!!tlsCertFile !== !!tlsKeyFile)
    throw new KilnError('USAGE_ERROR', 'HTTPS is half configured: set both TLS_CERT_FILE and TLS_KEY_FILE (or neither).');
  if (tlsCertFile && tlsKeyFile) {
    const [cert, key] = [await readPem(tlsCertFile, 'certificate'), await readPem(tlsKeyFile, 'key')];
    const fingerprint = checkPair(cert, key, tlsCertFile);
    return { key, cert, fingerprint, selfSigned: false, certFile: tlsCertFile };
  }
  return config.tlsSelfSigned ? selfSigned(config) : undefined;
}
