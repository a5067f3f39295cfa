/** `kiln serve` as a real process: first-start password, listening, refusing an open network, clean stop. */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { KILN, kiln } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';

const dir = tempDir();

function baseEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, KILN_HTTP_LOG: 'false', ...extra };
  for (const k of ['ADMIN_PASSWORD', 'DATABASE_URL', 'REDIS_URL', 'AUTH_ENABLED', 'PORT', 'HOST']) if (!(k in extra)) delete env[k];
  return env;
}

describe('kiln serve', () => {
  it('starts, prints the generated admin password once, serves, and stops on SIGTERM', async () => {
    const dataDir = path.join(dir, 'serve-data');
    const child = spawn(process.execPath, [KILN, 'serve', '--port', '0', '--data-dir', dataDir], { env: baseEnv() });
    let out = '';
    let err = '';
    child.stderr.on('data', (b: Buffer) => (err += b));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no listening line: ${out} ${err}`)), 60_000);
        child.stdout.on('data', (b: Buffer) => {
          out += b;
          const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
          if (m) {
            clearTimeout(timer);
            resolve(m[1]!);
          }
        });
        child.on('close', () => reject(new Error(`exited early: ${out} ${err}`)));
      });
      const file = path.join(dataDir, 'initial-admin-password');
      const password = (await readFile(file, 'utf8')).trim();
      assert.ok(out.includes(password), 'the password is printed');
      assert.equal((await stat(file)).mode & 0o777, 0o600);
      const health = await fetch(`${url}/api/v1/health`);
      assert.equal(health.status, 200);
      const login = await fetch(`${url}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'admin', password }),
      });
      assert.equal(login.status, 200);
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0, err);
  });

  it('refuses a non-loopback address with auth disabled unless --allow-open-network', async () => {
    const r = await kiln(['serve', '--host', '0.0.0.0', '--port', '0', '--data-dir', path.join(dir, 'open')], {
      env: baseEnv({ AUTH_ENABLED: 'false' }),
    });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /--allow-open-network/);
  });
});
