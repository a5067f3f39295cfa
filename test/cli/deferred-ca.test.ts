/**
 * bin/kiln defers NODE_EXTRA_CA_CERTS (src/cli/deferred-ca.ts): run as a program, a command that reaches
 * a server must still trust the authorities that variable names, and child processes must inherit it.
 * The daemon here serves TLS with its own self-signed certificate, trusted only through that variable.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import sharp from 'sharp';
import { resolveConfig } from '../../daemon/config.js';
import { buildServer } from '../../daemon/server.js';
import { restoreCaEnv } from '../../src/cli/deferred-ca.js';
import type { CliResult } from '../helpers/cli.js';
import { KILN } from '../helpers/cli.js';
import { makeImage, tempDir } from '../helpers/fixtures.js';

/** `kiln …` as a user runs it: the file itself (its shell part first), not `node bin/kiln`. */
function kilnProgram(args: string[], env: NodeJS.ProcessEnv, input = ''): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(KILN, args, { env: { ...env, PATH: `${path.dirname(process.execPath)}:${process.env.PATH}` } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b));
    child.stderr.on('data', (b: Buffer) => (stderr += b));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr, stdoutBuffer: Buffer.from(stdout) }));
    child.stdin.end(input);
  });
}

describe('NODE_EXTRA_CA_CERTS, deferred by bin/kiln', () => {
  const dir = tempDir('kiln-ca-');
  const dataDir = path.join(dir, 'data');
  const password = randomBytes(12).toString('hex');
  let app: FastifyInstance;
  let url = '';
  let caFile = '';
  const base = () => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      XDG_CONFIG_HOME: path.join(dir, 'cfg'),
      KILN_DATA_DIR: path.join(dir, 'cli-data'),
      KILN_CREDENTIAL_STORE: 'file',
    };
    for (const k of ['KILN_API_KEY', 'KILN_SERVER', 'NODE_EXTRA_CA_CERTS', 'KILN_DEFERRED_CA_CERTS']) delete env[k];
    return env;
  };

  before(async () => {
    const env = { ADMIN_USERNAME: 'admin', ADMIN_PASSWORD: password, TLS_SELF_SIGNED: 'true', KILN_WARM_ENGINES: 'false' };
    app = await buildServer(resolveConfig({ port: 0, host: '127.0.0.1', dataDir }, env));
    await app.listen({ port: 0, host: '127.0.0.1' });
    url = `https://127.0.0.1:${(app.server.address() as { port: number }).port}`;
    caFile = path.join(dataDir, 'tls', 'cert.pem');
  });
  after(() => app.close());

  it('login and a remote tool run trust the certificate it names; without it the server is refused', async () => {
    const trusted = { ...base(), NODE_EXTRA_CA_CERTS: caFile };
    const login = await kilnProgram(['login', url], trusted, `admin\n${password}\n`);
    assert.equal(login.code, 0, login.stderr);
    // Vouched for by an authority this machine trusts: nothing asked, nothing pinned.
    assert.doesNotMatch(login.stderr, /not signed by an authority/);
    const profiles = JSON.parse(readFileSync(path.join(dir, 'cfg', 'kiln', 'config.json'), 'utf8')).profiles;
    assert.equal(profiles.default.server, url);
    assert.equal(profiles.default.tlsFingerprint, undefined);

    const src = await makeImage(dir, 'in.png', 200, 100);
    const out = path.join(dir, 'out.png');
    const run = await kilnProgram(['resize', src, '--width', '50', '-o', out], trusted);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /running on https:\/\/127\.0\.0\.1/);
    const meta = await sharp(out).metadata();
    assert.deepEqual([meta.width, meta.height], [50, 25]);

    const refused = await kilnProgram(['resize', src, '--width', '50', '-o', path.join(dir, 'no.png')], base());
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, /not trusted by this machine/);
  });

  it('a local run with the variable set works, and child processes get the variable back', async () => {
    const src = await makeImage(dir, 'local.png', 80, 40);
    const out = path.join(dir, 'local-out.png');
    const env = { ...base(), NODE_EXTRA_CA_CERTS: caFile, XDG_CONFIG_HOME: path.join(dir, 'cfg-none') };
    const r = await kilnProgram(['resize', src, '--width', '20', '-o', out], env);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((await sharp(out).metadata()).width, 20);

    const saved = { ...process.env };
    try {
      delete process.env.NODE_EXTRA_CA_CERTS;
      process.env.KILN_DEFERRED_CA_CERTS = caFile;
      restoreCaEnv();
      assert.equal(process.env.NODE_EXTRA_CA_CERTS, caFile);
      assert.equal(process.env.KILN_DEFERRED_CA_CERTS, undefined);
    } finally {
      process.env = saved;
    }
  });
});
