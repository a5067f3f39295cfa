/**
 * kiln deploy against a real sshd started here (own host key, own client key, own sshd_config, a local
 * port), deploying into temp directories as the current user on 127.0.0.1 with the detached-process
 * path (--no-systemd). The deploy runs for real: release tarball, sftp upload, install, start, health.
 *
 * Speed: the target's "previous release" is seeded with this checkout's package-lock.json and a link to
 * its node_modules, so the install takes the "lock unchanged → reuse dependencies" path instead of a
 * fresh `npm ci` (which compiles better-sqlite3 and takes minutes). KILN_TEST_DEPLOY_FULL=1 skips the
 * seeding and runs the full npm install.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { X509Certificate } from 'node:crypto';
import { Agent, fetch } from 'undici';
import { kiln, REPO } from '../helpers/cli.js';

const SSHD = ['/usr/sbin/sshd', '/usr/bin/sshd'].find((p) => existsSync(p));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

async function waitPort(port: number, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const ok = await new Promise<boolean>((resolve) => {
      const c = net.connect(port, '127.0.0.1', () => {
        c.end();
        resolve(true);
      });
      c.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`port ${port} never opened`);
}

describe('kiln deploy over SSH', {
  skip: SSHD ? false : 'sshd is not installed (apt-get install openssh-server); the deploy test needs a real sshd',
}, () => {
  // Not tempDir(): its clean-up hook would run before ours, and the pid file of the daemon must outlive it.
  const dir = mkdtempSync(path.join(process.env.KILN_TMP_DIR ?? os.tmpdir(), 'kiln-deploy-'));
  const user = os.userInfo().username;
  const installDir = path.join(dir, 'opt');
  const dataDir = path.join(dir, 'data');
  const clientKey = path.join(dir, 'client_key');
  const knownHosts = path.join(dir, 'known_hosts');
  let sshd: ChildProcess | undefined;
  let sshPort = 0;
  let kilnPort = 0;
  let sshdLog = '';

  before(async () => {
    for (const k of ['host_key', 'client_key']) {
      const r = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', `kiln-test-${k}`, '-f', path.join(dir, k)]);
      assert.equal(r.status, 0, String(r.stderr));
    }
    copyFileSync(`${clientKey}.pub`, path.join(dir, 'authorized_keys'));
    sshPort = await freePort();
    kilnPort = await freePort();
    writeFileSync(
      path.join(dir, 'sshd_config'),
      [
        `Port ${sshPort}`,
        'ListenAddress 127.0.0.1',
        `HostKey ${path.join(dir, 'host_key')}`,
        `AuthorizedKeysFile ${path.join(dir, 'authorized_keys')}`,
        `PidFile ${path.join(dir, 'sshd.pid')}`,
        'PermitRootLogin prohibit-password',
        'PasswordAuthentication no',
        'KbdInteractiveAuthentication no',
        'UsePAM no',
        'StrictModes no',
        'Subsystem sftp internal-sftp',
        'LogLevel ERROR',
        '',
      ].join('\n'),
    );
    // Privilege separation directory; the Debian package creates it only when the service starts.
    if (process.getuid?.() === 0) mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
    sshd = spawn(SSHD!, ['-D', '-e', '-f', path.join(dir, 'sshd_config')], { stdio: ['ignore', 'ignore', 'pipe'] });
    sshd.stderr!.on('data', (b: Buffer) => (sshdLog += b.toString()));
    await waitPort(sshPort).catch((e: Error) => {
      throw new Error(`${e.message}: ${sshdLog}`);
    });
    const hostPub = readFileSync(path.join(dir, 'host_key.pub'), 'utf8').trim().split(/\s+/);
    writeFileSync(knownHosts, `[127.0.0.1]:${sshPort} ${hostPub[0]} ${hostPub[1]}\n`);
    if (process.env.KILN_TEST_DEPLOY_FULL !== '1') {
      const seed = path.join(installDir, 'releases', 'seed');
      mkdirSync(seed, { recursive: true });
      copyFileSync(path.join(REPO, 'package-lock.json'), path.join(seed, 'package-lock.json'));
      symlinkSync(path.join(REPO, 'node_modules'), path.join(seed, 'node_modules'));
      symlinkSync(seed, path.join(installDir, 'current'));
    }
  });

  after(async () => {
    sshd?.kill('SIGTERM');
    const pidFile = path.join(dataDir, 'kiln.pid');
    const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8')) : 0;
    if (!(pid > 0)) return rmSync(dir, { recursive: true, force: true });
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    if (alive()) process.kill(pid, 'SIGTERM');
    for (let i = 0; i < 100 && alive(); i++) await new Promise((r) => setTimeout(r, 100));
    if (alive()) process.kill(pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  const args = (extra: string[] = []) => [
    'deploy',
    `ssh://${user}@127.0.0.1:${sshPort}`,
    '--identity',
    clientKey,
    '--known-hosts',
    knownHosts,
    '--dir',
    installDir,
    '--data-dir',
    dataDir,
    '--port',
    String(kilnPort),
    '--host',
    '127.0.0.1',
    '--no-systemd',
    // The daemon's LibreOffice warm-up is not what this test is about.
    '--env',
    'KILN_WARM_ENGINES=false',
    ...extra,
  ];

  it('refuses a host whose key is not known', async () => {
    const empty = path.join(dir, 'empty_known_hosts');
    writeFileSync(empty, '');
    const r = await kiln(
      args().map((a) => (a === knownHosts ? empty : a)),
      { env: { SSH_AUTH_SOCK: '' } },
    );
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /not in .*empty_known_hosts.*SHA256:/);
    assert.ok(!existsSync(path.join(installDir, 'incoming')));
  });

  it('installs, starts, answers health, prints URL and admin password; re-running upgrades in place and keeps the data', async () => {
    const first = await kiln(args(), { env: { SSH_AUTH_SOCK: '' } });
    assert.equal(first.code, 0, `${first.stderr}\n${first.stdout}\nsshd: ${sshdLog}`);
    // https by default, with the daemon's own certificate: the login line carries its fingerprint.
    const url = `https://127.0.0.1:${kilnPort}`;
    assert.ok(first.stdout.includes(`is running at ${url}`), first.stdout);
    const fp = new X509Certificate(readFileSync(path.join(dataDir, 'tls', 'cert.pem'))).fingerprint256;
    assert.ok(first.stdout.includes(`Next: kiln login ${url} --tls-fingerprint ${fp}`), first.stdout);
    // The test checks the fingerprint itself (above); this agent only skips the authority check.
    const dispatcher = new Agent({ connect: { rejectUnauthorized: false } });
    const password = /Initial admin password \(user "admin"\): (\S+)/.exec(first.stdout)?.[1];
    assert.ok(password, first.stdout);
    assert.equal(readFileSync(path.join(dataDir, 'initial-admin-password'), 'utf8').trim(), password);
    const health = await fetch(`${url}/api/v1/health`, { dispatcher });
    assert.equal(health.status, 200);
    const login = await fetch(`${url}/api/auth/login`, {
      dispatcher,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password }),
    });
    assert.equal(login.status, 200);
    const { token } = (await login.json()) as { token: string };
    const key = (await (
      await fetch(`${url}/api/v1/api-keys`, {
        dispatcher,
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'survives upgrades' }),
      })
    ).json()) as { key: string };
    const pid1 = readFileSync(path.join(dataDir, 'kiln.pid'), 'utf8').trim();
    assert.match(readFileSync(`/proc/${pid1}/cmdline`, 'utf8'), /bin\/kiln\0serve/, 'the pid file names the running daemon');
    // Started through bin/kiln's shell part: node has the malloc tunables and a libuv pool for its jobs.
    const environ = readFileSync(`/proc/${pid1}/environ`, 'utf8').split('\0');
    assert.ok(environ.includes('MALLOC_ARENA_MAX=2'), 'no malloc tunables');
    assert.ok(
      environ.some((e) => /^UV_THREADPOOL_SIZE=\d+$/.test(e)),
      'no libuv pool size',
    );
    const current1 = readFileSync(path.join(installDir, 'current', 'package.json'), 'utf8');
    assert.match(current1, /"name": "kiln"/);
    assert.ok(existsSync(path.join(installDir, 'current', 'dist', 'src', 'cli', 'main.js')));
    assert.ok(!existsSync(path.join(installDir, 'current', 'test')));

    const second = await kiln(args(), { env: { SSH_AUTH_SOCK: '' } });
    assert.equal(second.code, 0, second.stderr);
    const pid2 = readFileSync(path.join(dataDir, 'kiln.pid'), 'utf8').trim();
    assert.notEqual(pid2, pid1, 'the daemon was restarted');
    assert.throws(() => process.kill(Number(pid1), 0), 'the old daemon is gone');
    assert.match(readFileSync(`/proc/${pid2}/cmdline`, 'utf8'), /bin\/kiln\0serve/, 'the pid file names the running daemon');
    // Same data dir: the key made before the upgrade still works, the admin password is unchanged.
    const jobs = await fetch(`${url}/api/v1/jobs`, { dispatcher, headers: { authorization: `Bearer ${key.key}` } });
    assert.equal(jobs.status, 200);
    const again = await fetch(`${url}/api/auth/login`, {
      dispatcher,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password }),
    });
    assert.equal(again.status, 200);
    // The certificate is kept across upgrades: the pin of the first login still holds.
    assert.equal(new X509Certificate(readFileSync(path.join(dataDir, 'tls', 'cert.pem'))).fingerprint256, fp);
  });
});
