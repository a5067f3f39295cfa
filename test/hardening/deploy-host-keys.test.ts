/**
 * Issue #21 item 11: `kiln deploy` refuses a host key listed as `@revoked` in known_hosts — also when
 * the same key is listed plainly, and also with --insecure-accept-host-key. The verdicts are checked on
 * real known_hosts files, and the whole command against a real SSH server (ssh2's, in this process).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createRequire } from 'node:module';
import { checkHostKey } from '../../src/cli/deploy/ssh-target.js';
import { tempDir } from '../helpers/fixtures.js';
import { kiln } from '../helpers/cli.js';

/** The SSH server of ssh2 (the library under node-ssh, which kiln deploy uses), typed as far as used here. */
interface SshServer {
  listen(port: number, host: string, cb: () => void): void;
  address(): AddressInfo;
  close(): void;
}
interface SshClient {
  on(event: 'authentication', cb: (ctx: { reject(): void }) => void): void;
  on(event: 'error', cb: () => void): void;
}
const { Server } = createRequire(import.meta.url)('ssh2') as {
  Server: new (opts: { hostKeys: Buffer[] }, onClient: (client: SshClient) => void) => SshServer;
};

function keygen(dir: string, name: string): { file: string; type: string; blob: string } {
  const file = path.join(dir, name);
  const r = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', file]);
  assert.equal(r.status, 0, String(r.stderr));
  const [type, blob] = readFileSync(`${file}.pub`, 'utf8').trim().split(/\s+/);
  return { file, type: type!, blob: blob! };
}

function hashed(name: string): string {
  const salt = randomBytes(20);
  return `|1|${salt.toString('base64')}|${createHmac('sha1', salt).update(name).digest('base64')}`;
}

describe('known_hosts verdicts', () => {
  const dir = tempDir();
  let host: { type: string; blob: string };
  let other: { type: string; blob: string };
  const t = { user: 'u', host: 'deploy.example', port: 22 };
  const verdict = (lines: string[]) => {
    const f = path.join(dir, `kh-${randomBytes(4).toString('hex')}`);
    writeFileSync(f, lines.join('\n') + '\n');
    return checkHostKey(t, Buffer.from(host.blob, 'base64'), f);
  };
  before(() => {
    host = keygen(dir, 'host');
    other = keygen(dir, 'other');
  });

  it('a @revoked key is refused alone, next to a plain line for it, and under any host pattern', () => {
    const plain = `deploy.example ${host.type} ${host.blob}`;
    assert.equal(verdict([plain]), 'known');
    assert.equal(verdict([`@revoked deploy.example ${host.type} ${host.blob}`]), 'revoked');
    assert.equal(verdict([plain, `@revoked deploy.example ${host.type} ${host.blob}`]), 'revoked');
    assert.equal(verdict([`@revoked * ${host.type} ${host.blob}`, plain]), 'revoked');
    assert.equal(verdict([`@revoked other.example ${host.type} ${host.blob}`, plain]), 'revoked');
    // Revoking another key leaves this one known.
    assert.equal(verdict([`@revoked * ${other.type} ${other.blob}`, plain]), 'known');
  });

  it('patterns, hashed names and negations match as in ssh; @cert-authority lines vouch for no plain key', () => {
    assert.equal(verdict([`*.example ${host.type} ${host.blob}`]), 'known');
    assert.equal(verdict([`deploy.exampl? ${host.type} ${host.blob}`]), 'known');
    assert.equal(verdict([`*.example,!deploy.example ${host.type} ${host.blob}`]), 'unknown');
    assert.equal(verdict([`${hashed('deploy.example')} ${host.type} ${host.blob}`]), 'known');
    assert.equal(verdict([`deploy.example ${other.type} ${other.blob}`]), 'changed');
    assert.equal(verdict([`deploy.example ${other.type} ${other.blob}`, `deploy.example ${host.type} ${host.blob}`]), 'known');
    assert.equal(verdict([`@cert-authority *.example ${other.type} ${other.blob}`]), 'unknown');
  });
});

describe('kiln deploy with a revoked host key', () => {
  const dir = tempDir();
  let server: SshServer;
  let port = 0;
  let hostKey: { file: string; type: string; blob: string };
  let clientKey: { file: string };
  let authenticated = 0;

  before(async () => {
    hostKey = keygen(dir, 'host_key');
    clientKey = keygen(dir, 'client_key');
    server = new Server({ hostKeys: [readFileSync(hostKey.file)] }, (client) => {
      client.on('authentication', (ctx) => {
        authenticated++;
        ctx.reject();
      });
      client.on('error', () => {});
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    port = server.address().port;
  });
  after(() => server.close());

  const deploy = (knownHosts: string, extra: string[] = []) =>
    kiln(
      [
        'deploy',
        `ssh://${os.userInfo().username}@127.0.0.1:${port}`,
        '--identity',
        clientKey.file,
        '--known-hosts',
        knownHosts,
        '--dir',
        path.join(dir, 'opt'),
        '--data-dir',
        path.join(dir, 'data'),
        ...extra,
      ],
      { env: { SSH_AUTH_SOCK: '' } },
    );

  it('is refused with --insecure-accept-host-key and when also listed plainly, before any login', async () => {
    const name = `[127.0.0.1]:${port}`;
    const revokedOnly = path.join(dir, 'known_hosts_revoked');
    writeFileSync(revokedOnly, `@revoked ${name} ${hostKey.type} ${hostKey.blob}\n`);
    const both = path.join(dir, 'known_hosts_both');
    writeFileSync(both, `${name} ${hostKey.type} ${hostKey.blob}\n@revoked * ${hostKey.type} ${hostKey.blob}\n`);
    for (const [file, extra] of [
      [revokedOnly, ['--insecure-accept-host-key']],
      [both, []],
      [both, ['--insecure-accept-host-key']],
    ] as const) {
      const r = await deploy(file, [...extra]);
      assert.equal(r.code, 1, `${file} ${extra}: ${r.stderr}`);
      assert.match(r.stderr, /@revoked/);
      assert.match(r.stderr, /SHA256:/);
    }
    assert.equal(authenticated, 0, 'no credentials were offered to a server with a revoked key');
    // The same server with its key listed plainly gets as far as the login (which this server refuses).
    const plain = path.join(dir, 'known_hosts_plain');
    writeFileSync(plain, `${name} ${hostKey.type} ${hostKey.blob}\n`);
    const r = await deploy(plain);
    assert.notEqual(r.code, 0);
    assert.doesNotMatch(r.stderr, /revoked/);
    assert.ok(authenticated > 0, r.stderr);
  });
});
