/** `kiln serve` as a real process: first-start password, listening, refusing an open network, clean stop. */
import assert from 'node:assert/strict';
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { readFile, stat, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ERROR_TABLE } from '../../src/core/errors.js';
import { KILN, kiln } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';
import { makeVideo } from '../helpers/media.js';
import { readSse } from '../helpers/server.js';

const dir = tempDir();

/** Resolves with the URL once `kiln serve` says it listens (on stderr), and what stderr said so far. */
function listening(child: ChildProcessWithoutNullStreams): Promise<{ url: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    let err = '';
    const timer = setTimeout(() => reject(new Error(`no listening line: ${err}`)), 60_000);
    child.stderr.on('data', (b: Buffer) => {
      err += b;
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1]!, stderr: err });
      }
    });
    child.on('close', () => reject(new Error(`exited early: ${err}`)));
  });
}

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
    child.stdout.on('data', (b: Buffer) => (out += b));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const started = listening(child);
    try {
      const { url, stderr } = await started;
      const file = path.join(dataDir, 'initial-admin-password');
      const password = (await readFile(file, 'utf8')).trim();
      assert.ok(stderr.includes(password), 'the password is printed (on stderr: stdout carries only log lines)');
      assert.ok(!out.includes(password), 'never on stdout');
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
    assert.equal(await exited, 0);
  });

  it('idle, wakes its main thread about ten times a second, not a hundred', { skip: process.platform !== 'linux' }, async () => {
    const child = spawn(process.execPath, [KILN, 'serve', '--port', '0', '--data-dir', path.join(dir, 'idle-data')], {
      env: baseEnv({ ADMIN_PASSWORD: 'idle-password-1' }),
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    try {
      await listening(child);
      // Voluntary context switches of the main thread: each time it sleeps in the event loop and wakes.
      const switches = async () =>
        Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(await readFile(`/proc/${child.pid}/task/${child.pid}/status`, 'utf8'))![1]);
      await new Promise((r) => setTimeout(r, 1000));
      const before = await switches();
      await new Promise((r) => setTimeout(r, 3000));
      const perSecond = ((await switches()) - before) / 3;
      // With the event-loop delay histogram of /metrics sampling every 10 ms it read ~100 a second.
      assert.ok(perSecond < 40, `${perSecond} wake-ups a second`);
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0);
  });

  it('refuses a non-loopback address with auth disabled unless --allow-open-network', async () => {
    const r = await kiln(['serve', '--host', '0.0.0.0', '--port', '0', '--data-dir', path.join(dir, 'open')], {
      env: baseEnv({ AUTH_ENABLED: 'false' }),
    });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /--allow-open-network/);
  });

  /** Runs `kiln serve` expecting it to refuse to start; one that listens anyway is killed (the test fails, never hangs). */
  async function refusedAtStart(args: string[], env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
    const child = spawn(process.execPath, [KILN, 'serve', '--data-dir', path.join(dir, 'refused'), ...args], {
      env: baseEnv({ ADMIN_PASSWORD: 'Refused-Admin-Pass-42', ...env }),
    });
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => {
      stderr += b;
      if (stderr.includes('listening on')) child.kill('SIGKILL');
    });
    // A start that hangs (spins) must fail the test, not outlive it.
    const hung = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    clearTimeout(hung);
    return { code, stderr };
  }

  it('refuses a SHUTDOWN_GRACE_S that is no number of seconds at start, before listening', async () => {
    for (const bad of ['10m', '-5', '1e309', 'yes']) {
      const r = await refusedAtStart(['--port', '0'], { SHUTDOWN_GRACE_S: bad });
      assert.equal(r.code, ERROR_TABLE.USAGE_ERROR.exit, `SHUTDOWN_GRACE_S=${bad}: ${r.stderr}`);
      assert.match(r.stderr, /SHUTDOWN_GRACE_S must be a number of seconds/);
    }
  });

  it('a port in use or a host that does not resolve is a USAGE_ERROR naming it', async () => {
    const busy = net.createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = String((busy.address() as net.AddressInfo).port);
    try {
      const r = await refusedAtStart(['--port', port], {});
      assert.equal(r.code, ERROR_TABLE.USAGE_ERROR.exit, r.stderr);
      assert.match(r.stderr, new RegExp(`port ${port} is already in use`));
    } finally {
      busy.close();
    }
    const r = await refusedAtStart(['--port', '0', '--host', 'no-such-host.invalid'], {});
    assert.equal(r.code, ERROR_TABLE.USAGE_ERROR.exit, r.stderr);
    assert.match(r.stderr, /no-such-host\.invalid does not resolve/);
  });

  it('a data dir that cannot be made is a USAGE_ERROR naming it, never a hang or an INTERNAL error', { timeout: 60_000 }, async () => {
    const file = path.join(dir, 'a-file');
    await writeFile(file, 'not a directory');
    // Under /proc, node's recursive mkdir used to spin at full CPU for ever (ENOENT for a child of a
    // directory that exists); a path under a file came out as a bare ENOTDIR with exit 1.
    for (const bad of [file, path.join(file, 'data'), '/proc/kiln-no-such/data']) {
      const r = await refusedAtStart(['--port', '0', '--data-dir', bad], {});
      assert.equal(r.code, ERROR_TABLE.USAGE_ERROR.exit, `${bad}: ${r.stderr}`);
      assert.match(r.stderr, /The data dir .* cannot be used: .*--data-dir \(DATA_DIR\)/, bad);
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    }
  });

  it('a DATABASE_URL that is no PostgreSQL URL is a USAGE_ERROR, not a connection attempt', async () => {
    for (const bad of ['mysql://kiln@db/kiln', 'sqlite:///var/lib/kiln/kiln.db', 'kiln.db']) {
      const r = await refusedAtStart(['--port', '0'], { DATABASE_URL: bad });
      assert.equal(r.code, ERROR_TABLE.USAGE_ERROR.exit, `${bad}: ${r.stderr}`);
      assert.match(r.stderr, /DATABASE_URL must be a PostgreSQL URL/, bad);
    }
  });

  async function startDaemon(name: string, env: Record<string, string>) {
    const dataDir = path.join(dir, name);
    const password = 'Drain-Admin-Pass-42';
    const child = spawn(process.execPath, [KILN, 'serve', '--port', '0', '--data-dir', dataDir], {
      env: baseEnv({ ADMIN_PASSWORD: password, KILN_WARM_ENGINES: 'false', ...env }),
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const { url } = await listening(child);
    const login = await fetch(`${url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password }),
    });
    const token = ((await login.json()) as { token: string }).token;
    return { child, exited, url, auth: { authorization: `Bearer ${token}` } };
  }

  const transcode = async (url: string, auth: Record<string, string>, clip: string, prefer: string) => {
    const fd = new FormData();
    fd.append('file', new File([await readFile(clip)], 'clip.mp4'));
    fd.append('settings', JSON.stringify({ quality: 'strong' }));
    return fetch(`${url}/api/v1/tools/video/compress-video`, { method: 'POST', headers: { ...auth, prefer }, body: fd });
  };

  it('on SIGTERM refuses new work with 503, lets a running transcode finish, and exits 0', async () => {
    const clip = makeVideo(dir, 'drain.mp4', { width: 640, height: 360, durationS: 12, audio: false });
    const d = await startDaemon('drain-data', { SHUTDOWN_GRACE_S: '60' });
    let sent = false;
    try {
      const queued = await transcode(d.url, d.auth, clip, 'respond-async');
      assert.equal(queued.status, 202);
      const { jobId } = (await queued.json()) as { jobId: string };
      for (let i = 0; i < 200; i++) {
        const job = (await (await fetch(`${d.url}/api/v1/jobs/${jobId}`, { headers: d.auth })).json()) as { status: string };
        if (job.status === 'running') break;
        await new Promise((r) => setTimeout(r, 50));
      }
      // Its progress stream stays open through the drain and ends with the result.
      const heard = readSse(`${d.url}/api/v1/jobs/${jobId}/progress`, d.auth.authorization.slice(7), 120_000);
      await new Promise((r) => setTimeout(r, 200));
      d.child.kill('SIGTERM');
      sent = true;
      await new Promise((r) => setTimeout(r, 300));
      const refused = await transcode(d.url, d.auth, clip, 'respond-async');
      assert.equal(refused.status, 503);
      assert.equal(refused.headers.get('retry-after'), '30');
      assert.equal(((await refused.json()) as { error: { reason: string } }).error.reason, 'draining');
      assert.equal((await fetch(`${d.url}/api/v1/readyz`)).status, 503);
      const { events } = await heard;
      const status = events.at(-1)?.event;
      assert.equal(status, 'completed', 'the running job finished during the drain');
    } finally {
      if (!sent) d.child.kill('SIGTERM');
    }
    assert.equal(await d.exited, 0);
  });

  it('after the grace period a waiting client gets 503 daemon-shutdown, never 500', async () => {
    const clip = makeVideo(dir, 'long.mp4', { width: 960, height: 540, durationS: 30, audio: false });
    const d = await startDaemon('grace-data', { SHUTDOWN_GRACE_S: '1' });
    let sent = false;
    try {
      const waiting = transcode(d.url, d.auth, clip, 'wait=120');
      await new Promise((r) => setTimeout(r, 1500));
      d.child.kill('SIGTERM');
      sent = true;
      const res = await waiting;
      assert.equal(res.status, 503);
      assert.equal(((await res.json()) as { error: { reason: string } }).error.reason, 'daemon-shutdown');
    } finally {
      if (!sent) d.child.kill('SIGTERM');
    }
    assert.equal(await d.exited, 0);
  });

  it('logs JSON lines only on stdout: one per request, probes at debug; LOG_FORMAT=pretty reads as text', async () => {
    for (const format of ['json', 'pretty']) {
      const dataDir = path.join(dir, `log-${format}`);
      const env = baseEnv({ ADMIN_PASSWORD: 'Log-Admin-Pass-42', KILN_WARM_ENGINES: 'false', LOG_LEVEL: 'debug', LOG_FORMAT: format });
      // The daemon logs unless KILN_HTTP_LOG says otherwise (the other tests switch it off).
      delete env.KILN_HTTP_LOG;
      const child = spawn(process.execPath, [KILN, 'serve', '--port', '0', '--data-dir', dataDir], { env });
      let out = '';
      child.stdout.on('data', (b: Buffer) => (out += b));
      const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
      const { url } = await listening(child);
      await fetch(`${url}/api/v1/health`);
      await fetch(`${url}/api/v1/no-such-route`);
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
      const lines = out.trim().split('\n');
      if (format === 'json') {
        const records = lines.map((l) => JSON.parse(l) as { level: number; msg: string; url?: string; status?: number });
        const requests = records.filter((r) => r.msg === 'request');
        assert.deepEqual(
          requests.map((r) => [r.url, r.status, r.level]),
          [
            ['/api/v1/health', 200, 20],
            ['/api/v1/no-such-route', 404, 30],
          ],
        );
      } else {
        assert.ok(
          lines.some((l) => / DEBUG request .*method=GET url=\/api\/v1\/health status=200/.test(l)),
          out,
        );
        assert.ok(!lines.some((l) => l.startsWith('{')), 'no JSON in pretty mode');
      }
    }
  });
});
