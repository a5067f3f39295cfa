/** `ssh://user@host[:port]` and the host-key check against a known_hosts file. */
import { createHash, createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { KilnError } from '../../core/errors.js';

export interface SshTarget {
  user: string;
  host: string;
  port: number;
}

export function parseSshTarget(raw: string): SshTarget {
  let u: URL;
  try {
    u = new URL(raw.includes('://') ? raw : `ssh://${raw}`);
  } catch {
    throw new KilnError('USAGE_ERROR', `Not an SSH target: ${raw} (ssh://user@host[:port])`);
  }
  if (u.protocol !== 'ssh:') throw new KilnError('USAGE_ERROR', `The target must be ssh://user@host[:port] (got ${raw}).`);
  if (u.password)
    throw new KilnError('USAGE_ERROR', 'Put no password in the target: kiln deploy uses SSH keys (the agent, or --identity FILE).');
  if (!u.hostname) throw new KilnError('USAGE_ERROR', `No host in ${raw}.`);
  const port = u.port ? Number(u.port) : 22;
  let user = decodeURIComponent(u.username);
  if (!user) {
    try {
      user = os.userInfo().username;
    } catch {
      user = process.env.USER ?? 'root';
    }
  }
  return { user, host: u.hostname.replace(/^\[|\]$/g, ''), port };
}

/** OpenSSH's SHA256 fingerprint of a host key blob. */
export function fingerprint(key: Buffer): string {
  return 'SHA256:' + createHash('sha256').update(key).digest('base64').replace(/=+$/, '');
}

/** How a known_hosts line names this host: `host` on port 22, `[host]:port` otherwise. */
function hostPattern(t: SshTarget): string {
  return t.port === 22 ? t.host : `[${t.host}]:${t.port}`;
}

/** An OpenSSH host pattern: `*` any run of characters, `?` one character, the rest literal. */
function globMatch(pattern: string, name: string): boolean {
  const re = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${re}$`, 'i').test(name);
}

/** Whether a known_hosts host field names `name`: hashed entries, patterns, and `!` negations (which win). */
function matchesHost(field: string, name: string): boolean {
  let hit = false;
  for (const entry of field.split(',')) {
    if (entry.startsWith('|1|')) {
      // Hashed entry: |1|base64(salt)|base64(HMAC-SHA1(salt, name)).
      const [, , salt, hash] = entry.split('|');
      if (salt && hash && createHmac('sha1', Buffer.from(salt, 'base64')).update(name).digest('base64') === hash) hit = true;
    } else if (entry.startsWith('!')) {
      if (globMatch(entry.slice(1), name)) return false;
    } else if (globMatch(entry, name)) hit = true;
  }
  return hit;
}

export type HostKeyVerdict = 'known' | 'unknown' | 'changed' | 'revoked';

/**
 * Checks the key the server offered against the known_hosts file. A key on a `@revoked` line is
 * refused whatever else the file says (ssh does the same; the revocation names a compromised key, so
 * it holds for every host and wins over a plain line listing the same key); `@cert-authority` lines
 * vouch for certificates only, never for a plain key.
 */
export function checkHostKey(t: SshTarget, key: Buffer, knownHostsFile: string): HostKeyVerdict {
  let text = '';
  try {
    text = readFileSync(knownHostsFile, 'utf8');
  } catch {
    return 'unknown';
  }
  const name = hostPattern(t);
  const offered = key.toString('base64');
  let known = false;
  let seen = false;
  for (const line of text.split('\n')) {
    const parts = line.trim().split(/\s+/);
    if (parts.length < 3 || parts[0]!.startsWith('#')) continue;
    const marker = parts[0]!.startsWith('@') ? parts[0] : undefined;
    const [hosts, type, blob] = marker ? parts.slice(1) : parts;
    if (!hosts || !type || !blob) continue;
    // The key type is inside the blob as well; comparing the blob is enough.
    if (marker === '@revoked') {
      if (blob === offered) return 'revoked';
      continue;
    }
    if (marker || !matchesHost(hosts, name)) continue;
    if (blob === offered) known = true;
    else seen = true;
  }
  return known ? 'known' : seen ? 'changed' : 'unknown';
}
