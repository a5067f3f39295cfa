/**
 * Issue #21 item 3: the daemon serves HTTPS with a self-signed certificate it makes and keeps (0600) and
 * prints the fingerprint of; `kiln login` pins that fingerprint on first use and every later call uses
 * the pin; a swapped certificate is refused before any request (with its key) is sent; plain http to a
 * non-loopback address is refused without --insecure-http.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes, X509Certificate } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { resolveConfig } from '../../daemon/config.js';
import { makeSelfSigned } from '../../daemon/http/tls.js';
import { buildServer } from '../../daemon/server.js';
import { RemoteClient } from '../../src/cli/remote/client.js';
import { KILN, kiln } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';

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

/** A non-loopback address of this machine, if it has one. */
function lanAddress(): string | undefined {
  for (const list of Object.values(os.networkInterfaces()))
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  return undefined;
}

describe('HTTPS with a pinned self-signed certificate', () => {
  const dir = tempDir('kiln-tls-');
  const dataDir = path.join(dir, 'data');
  const password = randomBytes(12).toString('hex');
  const env = { ADMIN_USERNAME: 'admin', ADMIN_PASSWORD: password, TLS_SELF_SIGNED: 'true', KILN_WARM_ENGINES: 'false' };
  const cli = { XDG_CONFIG_HOME: path.join(dir, 'cfg'), KILN_API_KEY: '', KILN_SERVER: '', KILN_CREDENTIAL_STORE: 'file' };
  let port = 0;
  let url = '';
  let app: FastifyInstance | undefined;

  const start = async () => {
    app = await buildServer(resolveConfig({ port, host: '127.0.0.1', dataDir }, env));
    await app.listen({ port, host: '127.0.0.1' });
  };
  const stop = async () => {
    await app?.close();
    app = undefined;
  };
  const profile = () =>
    (
      JSON.parse(readFileSync(path.join(cli.XDG_CONFIG_HOME, 'kiln', 'config.json'), 'utf8')) as {
        profiles: Record<string, Record<string, unknown>>;
      }
    ).profiles.default!;

  before(async () => {
    port = await freePort();
    url = `https://127.0.0.1:${port}`;
    await start();
  });
  after(stop);

  it('kiln serve makes the certificate once (0600 in the data dir) and prints its fingerprint', async () => {
    const certFile = path.join(dataDir, 'tls', 'cert.pem');
    const fingerprint = new X509Certificate(readFileSync(certFile)).fingerprint256;
    assert.equal(app!.kiln.tls?.fingerprint, fingerprint);
    assert.equal(statSync(path.join(dataDir, 'tls', 'key.pem')).mode & 0o777, 0o600);
    assert.equal(statSync(certFile).mode & 0o777, 0o600);
    // The real command, on a copy of the data dir's certificate: same fingerprint on its banner.
    const other = path.join(dir, 'serve-data');
    const child = spawn(process.execPath, [KILN, 'serve', '--port', '0', '--data-dir', other], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr!.on('data', (d) => (err += d));
    try {
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`no banner: ${err}`)), 60_000);
        child.stderr!.on('data', () => {
          if (!/SHA-256 fingerprint: \S+/.test(err)) return;
          clearTimeout(t);
          resolve();
        });
        child.once('exit', (c) => reject(new Error(`kiln serve exited ${c}: ${err}`)));
      });
    } finally {
      child.kill('SIGTERM');
    }
    assert.match(err, /listening on https:\/\//);
    const printed = /SHA-256 fingerprint: (\S+)/.exec(err)![1];
    assert.equal(printed, new X509Certificate(readFileSync(path.join(other, 'tls', 'cert.pem'))).fingerprint256);
    // Made once: a restart serves the same certificate (the pins of clients hold).
    await stop();
    await start();
    assert.equal(app!.kiln.tls?.fingerprint, fingerprint);
    // A key that does not belong to the certificate (a crash between the two writes) is not served: a new pair is made.
    await stop();
    writeFileSync(path.join(dataDir, 'tls', 'key.pem'), (await makeSelfSigned({ host: '127.0.0.1', publicHosts: [] })).key);
    await start();
    assert.notEqual(app!.kiln.tls?.fingerprint, fingerprint);
    assert.equal(app!.kiln.tls?.fingerprint, new X509Certificate(readFileSync(certFile)).fingerprint256);
  });

  it('kiln login pins the fingerprint on first use, and later calls use the pin', async () => {
    const refused = await kiln(['login', url], { env: cli, input: `no\nadmin\n${password}\n` });
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, /not signed by an authority/);
    const r = await kiln(['login', url], { env: cli, input: `yes\nadmin\n${password}\n` });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.stderr.includes(app!.kiln.tls!.fingerprint), r.stderr);
    assert.equal(profile().tlsFingerprint, app!.kiln.tls!.fingerprint);
    const jobs = await kiln(['jobs', 'list', '--json'], { env: cli });
    assert.equal(jobs.code, 0, jobs.stderr);
    // The same server by --server: the profile's pin applies too. Without any pin the certificate is refused.
    assert.equal((await kiln(['jobs', 'list', '--server', url], { env: cli })).code, 0);
    const unpinned = await kiln(['jobs', 'list', '--server', url], {
      env: { ...cli, XDG_CONFIG_HOME: path.join(dir, 'cfg-empty'), KILN_API_KEY: 'kiln_x' },
    });
    assert.equal(unpinned.code, 1);
    assert.match(unpinned.stderr, /not trusted by this machine.*kiln login/s);
  });

  it('the pin holds on every new connection, parallel and after idle ones closed', async () => {
    // New connections would resume the TLS session, which presents no certificate to check.
    app!.server.keepAliveTimeout = 50;
    const client = new RemoteClient(url, undefined, app!.kiln.tls!.fingerprint);
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(Array.from({ length: 6 }, () => client.json<{ status: string }>('GET', '/api/v1/health')));
      assert.deepEqual(
        answers.map((a) => a.status),
        Array(6).fill('healthy'),
      );
      await new Promise((r) => setTimeout(r, 150));
    }
    const wrong = new RemoteClient(url, undefined, `${'00:'.repeat(31)}00`);
    await assert.rejects(wrong.json('GET', '/api/v1/health'), /has changed/);
  });

  it('a swapped certificate is refused before anything is sent; re-pinning needs its fingerprint', async () => {
    await stop();
    // Someone else answers on the daemon's address with another self-signed certificate.
    const fake = await makeSelfSigned({ host: '127.0.0.1', publicHosts: [] });
    const seen: string[] = [];
    const impostor = https.createServer({ key: fake.key, cert: fake.cert }, (req, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
      res.end('{}');
    });
    await new Promise<void>((resolve) => impostor.listen(port, '127.0.0.1', () => resolve()));
    const fakeFp = new X509Certificate(fake.cert).fingerprint256;
    try {
      const r = await kiln(['jobs', 'list'], { env: cli });
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /has changed/);
      assert.ok(r.stderr.includes(fakeFp), r.stderr);
      assert.match(r.stderr, /kiln login .* --tls-fingerprint/);
      const again = await kiln(['login', url], { env: cli, input: `yes\nadmin\n${password}\n` });
      assert.equal(again.code, 1, again.stderr);
      assert.match(again.stderr, /has changed/);
      assert.deepEqual(seen, [], 'no request (and no key, no password) reached the impostor');
    } finally {
      await new Promise((resolve) => impostor.close(resolve));
    }
    // The daemon's certificate replaced on purpose: pinned again by naming the new fingerprint.
    const { rmSync } = await import('node:fs');
    rmSync(path.join(dataDir, 'tls'), { recursive: true });
    await start();
    const fresh = app!.kiln.tls!.fingerprint;
    assert.notEqual(fresh, profile().tlsFingerprint);
    const wrong = await kiln(['login', url, '--tls-fingerprint', fakeFp], { env: cli, input: `admin\n${password}\n` });
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /not .*nothing was sent/);
    const repin = await kiln(['login', url, '--tls-fingerprint', fresh.replace(/:/g, '').toLowerCase()], {
      env: cli,
      input: `admin\n${password}\n`,
    });
    assert.equal(repin.code, 0, repin.stderr);
    assert.equal(profile().tlsFingerprint, fresh);
    assert.equal((await kiln(['jobs', 'list'], { env: cli })).code, 0);
  });
});

describe('plain http to another machine', { skip: lanAddress() ? false : 'no non-loopback IPv4 address here' }, () => {
  const dir = tempDir('kiln-http-');
  const password = randomBytes(12).toString('hex');
  const cli = { XDG_CONFIG_HOME: path.join(dir, 'cfg'), KILN_API_KEY: '', KILN_SERVER: '', KILN_CREDENTIAL_STORE: 'file' };
  let app: FastifyInstance;
  let url = '';
  before(async () => {
    const config = resolveConfig(
      { port: 0, host: '0.0.0.0', dataDir: path.join(dir, 'data') },
      { ADMIN_USERNAME: 'admin', ADMIN_PASSWORD: password },
    );
    app = await buildServer(config);
    await app.listen({ port: 0, host: '0.0.0.0' });
    url = `http://${lanAddress()}:${(app.server.address() as net.AddressInfo).port}`;
  });
  after(() => app.close());

  it('kiln login and --server refuse it unless told --insecure-http', async () => {
    const r = await kiln(['login', url], { env: cli, input: `admin\n${password}\n` });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /Refusing plain http/);
    assert.match(r.stderr, /--insecure-http/);
    const run = await kiln(['jobs', 'list', '--server', url], { env: { ...cli, KILN_API_KEY: 'kiln_x' } });
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /Refusing plain http/);
    const ok = await kiln(['login', url, '--insecure-http'], { env: cli, input: `admin\n${password}\n` });
    assert.equal(ok.code, 0, ok.stderr);
    // Given at login, it holds for that server; another server on plain http still needs the flag.
    assert.equal((await kiln(['jobs', 'list'], { env: cli })).code, 0);
    const key = await kiln(['jobs', 'list', '--server', url.replace(/:(\d+)$/, ':1'), '--json'], { env: cli });
    assert.equal(key.code, 2, key.stderr);
    const flagged = await kiln(['jobs', 'list', '--server', url, '--insecure-http'], {
      env: { ...cli, XDG_CONFIG_HOME: path.join(dir, 'other') },
    });
    assert.notEqual(flagged.code, 2, flagged.stderr);
    assert.match(flagged.stderr, /UNAUTHORIZED|Credentials|kiln login/i);
  });
});
