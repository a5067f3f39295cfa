/**
 * Issue #21 item 3, the deploy side: `kiln deploy` serves https unless told --insecure-http (its own
 * certificate pinned through the login line, the admin's certificate, or loopback behind a TLS proxy).
 * The daemon settings each plan produces are started for real here, and the health probe kiln deploy
 * runs on the remote is run against them. (test/cli/deploy.test.ts runs the whole deploy over sshd.)
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, it } from 'node:test';
import { resolveConfig } from '../../daemon/config.js';
import { makeSelfSigned } from '../../daemon/http/tls.js';
import { buildServer } from '../../daemon/server.js';
import { healthScript } from '../../src/cli/deploy/remote-scripts.js';
import { fingerprintOf, loginLine, planTransport, transportSettings } from '../../src/cli/deploy/transport.js';
import { tempDir } from '../helpers/fixtures.js';

/** Starts a daemon with the plan's settings and runs the deploy health probe against it. */
async function probe(
  dataDir: string,
  env: [string, string][],
  host: string,
  tls: boolean,
  timeoutS = 20,
): Promise<{ out: string; fingerprint?: string }> {
  const app = await buildServer(
    resolveConfig(
      { port: 0, host, dataDir },
      { ADMIN_USERNAME: 'admin', ADMIN_PASSWORD: randomBytes(8).toString('hex'), ...Object.fromEntries(env) },
    ),
  );
  try {
    await app.listen({ port: 0, host });
    const port = (app.server.address() as AddressInfo).port;
    const script = healthScript({ dir: '/nowhere', dataDir, port, host, node: process.execPath, tls }, timeoutS);
    // Not spawnSync: the daemon answers from this very process.
    const r = await promisify(execFile)('sh', ['-c', script], { encoding: 'utf8' }).catch((e: { stdout: string; stderr: string }) => e);
    return { out: r.stdout + r.stderr, fingerprint: app.kiln.tls?.fingerprint };
  } finally {
    await app.close();
  }
}

describe('kiln deploy transport plans', () => {
  const dir = tempDir('kiln-deploy-tls-');

  it('chooses https by default and refuses contradictory flags', () => {
    assert.deepEqual(planTransport({}), { kind: 'self-signed' });
    assert.deepEqual(planTransport({ insecureHttp: true }), { kind: 'http' });
    assert.throws(() => planTransport({ tlsCert: '/x' }), /go together/);
    assert.throws(() => planTransport({ behindProxy: 'http://kiln.example.com' }), /https URL/);
    assert.throws(() => planTransport({ behindProxy: 'https://kiln.example.com', insecureHttp: true }), /Choose one/);
    const proxy = planTransport({ behindProxy: 'https://kiln.example.com' });
    assert.equal(transportSettings(proxy, '/d', '0.0.0.0').host, '127.0.0.1', 'a proxied daemon listens on loopback only');
    assert.equal(loginLine(proxy, 'server.example', 1349), 'kiln login https://kiln.example.com');
    assert.equal(loginLine({ kind: 'http' }, 'server.example', 1349), 'kiln login http://server.example:1349 --insecure-http');
  });

  it('self-signed: the daemon serves https, the probe sees it healthy, the login line pins its certificate', async () => {
    const dataDir = path.join(dir, 'self');
    const plan = planTransport({});
    const s = transportSettings(plan, dataDir, '127.0.0.1');
    const r = await probe(dataDir, s.env, s.host, true);
    assert.match(r.out, /^health=\{"status":"healthy"/m);
    const fp = fingerprintOf(readFileSync(path.join(dataDir, 'tls', 'cert.pem'), 'utf8'));
    assert.equal(fp, r.fingerprint);
    assert.equal(loginLine(plan, 'server.example', 1349, fp), `kiln login https://server.example:1349 --tls-fingerprint ${fp}`);
  });

  it("the admin's certificate: served as given", async () => {
    const pair = await makeSelfSigned({ host: '127.0.0.1', publicHosts: ['kiln.example.com'] });
    const certFile = path.join(dir, 'c.pem');
    const keyFile = path.join(dir, 'k.pem');
    writeFileSync(certFile, pair.cert);
    writeFileSync(keyFile, pair.key, { mode: 0o600 });
    const plan = planTransport({ tlsCert: certFile, tlsKey: keyFile });
    assert.equal(plan.kind, 'cert');
    // On the remote the files are uploaded to these paths; here they are the local ones.
    const env = transportSettings(plan, dir, '127.0.0.1').env.map(([k, v]): [string, string] => [
      k,
      k === 'TLS_CERT_FILE' ? certFile : k === 'TLS_KEY_FILE' ? keyFile : v,
    ]);
    assert.deepEqual(
      env.map(([k]) => k),
      ['TLS_CERT_FILE', 'TLS_KEY_FILE'],
    );
    const r = await probe(path.join(dir, 'given'), env, '127.0.0.1', true);
    assert.match(r.out, /^health=/m);
    assert.equal(r.fingerprint, fingerprintOf(pair.cert));
  });

  it('a plain http probe of an https daemon fails: the probe follows the plan', async () => {
    const dataDir = path.join(dir, 'mismatch');
    const r = await probe(dataDir, [['TLS_SELF_SIGNED', 'true']], '127.0.0.1', false, 2);
    assert.match(r.out, /^health=timeout/m);
    assert.doesNotMatch(r.out, /^health=\{/m);
  });
});
