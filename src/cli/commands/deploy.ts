/**
 * `kiln deploy ssh://user@host[:port]`: installs (or upgrades) kiln on a server and starts it.
 * Checks Node >= 20.9 there, uploads a release built from this checkout, installs its production
 * dependencies with npm, starts it as a systemd unit (root with systemd) or a detached process with
 * a pid file, waits for /api/v1/health, and prints the URL, the initial admin password and the login
 * line. It serves https (deploy/transport.ts): its own certificate, pinned through the login line, the
 * admin's, or loopback behind a TLS proxy. The data directory lives outside the releases, so an
 * upgrade keeps users, keys and jobs.
 */
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { KilnError } from '../../core/errors.js';
import { createWorkspace } from '../../core/workspace.js';
import { buildRelease } from '../deploy/release.js';
import {
  detachedStartScript,
  healthScript,
  installScript,
  PROBE,
  sq,
  systemdStartScript,
  systemdUnit,
  type Layout,
} from '../deploy/remote-scripts.js';
import { checkHostKey, fingerprint, parseSshTarget, type SshTarget } from '../deploy/ssh-target.js';
import { fingerprintOf, loginLine, planTransport, remoteCertPaths, transportSettings } from '../deploy/transport.js';

type Opts = Record<string, string | boolean | undefined>;

const log = (m: string) => process.stderr.write(`kiln deploy: ${m}\n`);

function versionAtLeast(v: string, min: [number, number]): boolean {
  const [a = 0, b = 0] = v.split('.').map(Number);
  return a > min[0] || (a === min[0] && b >= min[1]);
}

function parseEnv(list: string[] | undefined): [string, string][] {
  return (list ?? []).map((e) => {
    const m = /^([A-Z_][A-Z0-9_]*)=(.*)$/s.exec(e);
    if (!m) throw new KilnError('USAGE_ERROR', `--env takes NAME=VALUE (got "${e}").`);
    if (/PASSWORD|SECRET|TOKEN|KEY/.test(m[1]!))
      throw new KilnError(
        'USAGE_ERROR',
        `--env ${m[1]}: secrets do not go on the command line (process lists, shell history); set them on the server.`,
      );
    return [m[1]!, m[2]!];
  });
}

function parseFacts(out: string): Record<string, string> {
  const facts: Record<string, string> = {};
  for (const line of out.split('\n')) {
    const i = line.indexOf('=');
    if (i > 0) facts[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  return facts;
}

function defaultKeys(): string[] {
  const dir = path.join(os.homedir(), '.ssh');
  return ['id_ed25519', 'id_ecdsa', 'id_rsa'].map((n) => path.join(dir, n)).filter((p) => existsSync(p));
}

async function connect(t: SshTarget, o: Opts) {
  const { NodeSSH } = await import('node-ssh');
  const ssh = new NodeSSH();
  const knownHosts = (o.knownHosts as string | undefined) ?? path.join(os.homedir(), '.ssh', 'known_hosts');
  let verdict: { result: string; fp: string } | undefined;
  const identity = o.identity as string | undefined;
  const keys = identity ? [identity] : defaultKeys();
  if (identity && !existsSync(identity)) throw new KilnError('USAGE_ERROR', `No key file ${identity}.`);
  const agent = process.env.SSH_AUTH_SOCK;
  if (!keys.length && !agent) throw new KilnError('USAGE_ERROR', 'No SSH key: pass --identity FILE, or run an ssh agent (SSH_AUTH_SOCK).');
  try {
    await ssh.connect({
      host: t.host,
      port: t.port,
      username: t.user,
      ...(keys.length ? { privateKey: readFileSync(keys[0]!, 'utf8') } : {}),
      ...(agent && !identity ? { agent } : {}),
      readyTimeout: 20_000,
      hostVerifier: (key: Buffer) => {
        const result = checkHostKey(t, key, knownHosts);
        verdict = { result, fp: fingerprint(key) };
        return result === 'known' || (result === 'unknown' && o.insecureAcceptHostKey === true);
      },
    } as never);
  } catch (e) {
    if (verdict?.result === 'revoked') {
      throw new KilnError(
        'FORBIDDEN',
        `The host key of ${t.host}:${t.port} (${verdict.fp}) is marked @revoked in ${knownHosts}: it must never be trusted (--insecure-accept-host-key does not override this). Give the server a new host key, then list that one.`,
        { reason: 'host-key-revoked' },
      );
    }
    if (verdict?.result === 'changed') {
      throw new KilnError(
        'FORBIDDEN',
        `The host key of ${t.host}:${t.port} (${verdict.fp}) differs from the one in ${knownHosts}. Someone may be intercepting the connection; refusing.`,
      );
    }
    if (verdict?.result === 'unknown') {
      throw new KilnError(
        'FORBIDDEN',
        `${t.host}:${t.port} is not in ${knownHosts} (its key is ${verdict.fp}). Check that fingerprint, then add the host (ssh-keyscan -p ${t.port} ${t.host} >> ${knownHosts}) or pass --insecure-accept-host-key.`,
      );
    }
    const msg = (e as Error).message;
    if (/authentication/i.test(msg)) throw new KilnError('UNAUTHORIZED', `SSH login as ${t.user}@${t.host} was refused: ${msg}`);
    throw new KilnError('UNAVAILABLE', `Cannot connect to ${t.host}:${t.port} over SSH: ${msg}`);
  }
  if (verdict?.result === 'unknown') log(`accepted the unknown host key ${verdict.fp} (--insecure-accept-host-key)`);
  return ssh;
}

type Ssh = Awaited<ReturnType<typeof connect>>;

async function run(ssh: Ssh, script: string, what: string): Promise<string> {
  const r = await ssh.execCommand('sh -s', { stdin: script });
  if (r.code !== 0)
    throw new KilnError(
      'UNAVAILABLE',
      `${what} failed on the remote (exit ${r.code}): ${(r.stderr || r.stdout).trim().split('\n').slice(-5).join(' | ')}`,
    );
  if (r.stderr.trim()) for (const l of r.stderr.trim().split('\n')) process.stderr.write(`  remote: ${l}\n`);
  return r.stdout;
}

export async function deployCommand(target: string, o: Opts): Promise<void> {
  const t = parseSshTarget(target);
  const port = Number(o.port ?? 1349);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new KilnError('USAGE_ERROR', `--port must be 1-65535 (got ${o.port}).`);
  const plan = planTransport(o);

  log(`connecting to ${t.user}@${t.host}:${t.port}`);
  const ssh = await connect(t, o);
  const ws = await createWorkspace();
  try {
    const facts = parseFacts(await run(ssh, PROBE, 'Checking the remote'));
    if (!facts.node || !facts.nodeVersion)
      throw new KilnError(
        'FEATURE_INCOMPATIBLE',
        `No Node.js on ${t.host}: install Node 20.9 or newer there (e.g. from nodejs.org or NodeSource), then run kiln deploy again.`,
      );
    if (!versionAtLeast(facts.nodeVersion, [20, 9]))
      throw new KilnError('FEATURE_INCOMPATIBLE', `${t.host} has Node ${facts.nodeVersion}; kiln needs 20.9 or newer.`);
    if (!facts.npm) throw new KilnError('FEATURE_INCOMPATIBLE', `${t.host} has Node but no npm; install npm there.`);
    if (facts.tar !== 'yes') throw new KilnError('FEATURE_INCOMPATIBLE', `${t.host} has no tar.`);
    const root = facts.uid === '0';
    const home = facts.home || (root ? '/root' : `/home/${t.user}`);
    const dataDir = (o.dataDir as string | undefined) ?? (root ? '/var/lib/kiln' : `${home}/.local/share/kiln`);
    const served = transportSettings(plan, dataDir, (o.host as string | undefined) ?? '0.0.0.0');
    const host = served.host;
    const layout: Layout = {
      dir: (o.dir as string | undefined) ?? (root ? '/opt/kiln' : `${home}/.local/lib/kiln`),
      dataDir,
      port,
      host,
      node: facts.node,
      // Given --env settings come after, so an admin can still override (e.g. PUBLIC_HOSTS).
      env: [...served.env, ...parseEnv(o.env as string[] | undefined)],
      tls: plan.kind === 'self-signed' || plan.kind === 'cert',
    };
    for (const p of [layout.dir, layout.dataDir])
      if (!p.startsWith('/')) throw new KilnError('USAGE_ERROR', `Remote paths must be absolute (got ${p}).`);
    log(
      `${t.host}: Node ${facts.nodeVersion}, ${facts.systemd === 'yes' ? 'systemd' : 'no systemd'}; installing into ${layout.dir}, data in ${layout.dataDir}`,
    );

    const release = await buildRelease(ws.dir);
    log(`release ${release.id} (${(release.bytes / 1048576).toFixed(1)} MB)`);
    const incoming = `${layout.dir}/incoming`;
    await run(
      ssh,
      `set -eu\nmkdir -p ${sq(incoming)} ${sq(layout.dir + '/releases')} ${sq(layout.dataDir)}\nchmod 700 ${sq(layout.dataDir)}\n`,
      'Creating directories',
    );
    if (plan.kind === 'cert') {
      const to = remoteCertPaths(layout.dataDir);
      await run(
        ssh,
        `set -eu\nmkdir -p ${sq(layout.dataDir + '/tls')}\nchmod 700 ${sq(layout.dataDir + '/tls')}\n`,
        'Creating the TLS directory',
      );
      await ssh.putFile(plan.certFile, to.cert);
      await ssh.putFile(plan.keyFile, to.key);
      await run(ssh, `chmod 600 ${sq(to.cert)} ${sq(to.key)}\n`, 'Protecting the TLS key');
    }
    const remoteTgz = `${incoming}/kiln-${release.id}.tgz`;
    await ssh.putFile(release.file, remoteTgz);
    await run(ssh, installScript(layout, release.id, remoteTgz, facts.npm), 'Installing kiln');

    const useSystemd = root && facts.systemd === 'yes' && o.systemd !== false;
    const started = useSystemd
      ? await run(ssh, systemdStartScript(layout, systemdUnit(layout, t.user)), 'Starting the systemd unit')
      : await run(ssh, detachedStartScript(layout), 'Starting kiln');
    log(started.trim().replace(/^started=/, 'started: '));

    const health = parseFacts(await ssh.execCommand(healthScript(layout, 90)).then((r) => r.stdout));
    if (!health.health || health.health === 'timeout') {
      const logs = useSystemd ? 'journalctl -u kiln' : `${layout.dataDir}/kiln.log`;
      const tail = await ssh.execCommand(
        useSystemd ? 'journalctl -u kiln -n 20 --no-pager' : `tail -n 20 ${sq(layout.dataDir + '/kiln.log')}`,
      );
      throw new KilnError(
        'UNAVAILABLE',
        `kiln did not become healthy on ${t.host}:${port} within 90 s; see ${logs}:\n${tail.stdout.trim()}`,
      );
    }
    const pw = await ssh.execCommand(`cat ${sq(layout.dataDir + '/initial-admin-password')} 2>/dev/null || true`);
    const shownHost = host === '0.0.0.0' || host === '::' ? t.host : host;
    const url = `${layout.tls ? 'https' : 'http'}://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${port}`;
    process.stdout.write(`kiln ${release.id.split('-')[0]} is running at ${url}\n`);
    // Read over SSH, whose host key was checked: the fingerprint in the login line can be trusted.
    const fingerprint =
      plan.kind === 'self-signed'
        ? fingerprintOf((await ssh.execCommand(`cat ${sq(layout.dataDir + '/tls/cert.pem')}`)).stdout)
        : undefined;
    if (fingerprint) process.stdout.write(`TLS certificate (self-signed) SHA-256 fingerprint: ${fingerprint}\n`);
    if (plan.kind === 'proxy')
      process.stdout.write(
        `It listens on 127.0.0.1 only: point your TLS reverse proxy for ${plan.url.origin} at http://127.0.0.1:${port} (docs/OPERATIONS.md).\n`,
      );
    if (plan.kind === 'http')
      process.stdout.write(
        'Plain http (--insecure-http): passwords and keys cross the network readable. Use it on a trusted network only.\n',
      );
    const password = pw.stdout.trim();
    if (password)
      process.stdout.write(
        `Initial admin password (user "admin"): ${password}\n(It is in ${layout.dataDir}/initial-admin-password on the server; change it after the first login.)\n`,
      );
    else process.stdout.write('The admin account already exists (its password was set on the first deploy).\n');
    process.stdout.write(`Next: ${loginLine(plan, shownHost, port, fingerprint)}\n`);
  } finally {
    ssh.dispose();
    await ws.dispose();
  }
}
