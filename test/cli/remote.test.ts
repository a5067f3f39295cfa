/**
 * Remote mode, login/logout, config and jobs against a real daemon (test/helpers/server.ts), with the
 * real kiln binary as a child process.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { ERROR_TABLE } from '../../src/core/errors.js';
import { kiln, KILN } from '../helpers/cli.js';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { makeVideo } from '../helpers/media.js';
import { startServer, type TestServer } from '../helpers/server.js';

const dir = tempDir('kiln-remote-');
let srv: TestServer;
let slow: TestServer;
let apiKey: string;

async function api<T>(s: TestServer, method: string, p: string, body?: unknown, token = s.token): Promise<{ status: number; body: T }> {
  const res = await fetch(s.url + p, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as T };
}

/** Each call gets its own config dir unless one is given, so profiles never leak between tests. */
function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { XDG_CONFIG_HOME: path.join(dir, 'cfg-' + Math.random().toString(36).slice(2)), KILN_API_KEY: apiKey, KILN_SERVER: '', ...extra };
}

async function ctrlC(server: () => TestServer, name: string): Promise<void> {
  // Long enough that VP9 at "high" is still encoding when Ctrl-C comes.
  const video = makeVideo(dir, `${name}.mp4`, { width: 640, height: 360, durationS: 20, fps: 25, audio: false });
  const key = (await api<{ key: string }>(server(), 'POST', '/api/v1/api-keys', { name: 'c' })).body.key;
  const child = spawn(
    process.execPath,
    [KILN, 'convert-video', video, '--format', 'webm', '--quality', 'high', '-o', path.join(dir, `${name}.webm`), '--server', server().url],
    {
      env: { ...process.env, ...env({ KILN_API_KEY: key }) },
    },
  );
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  let ended = false;
  const exited = new Promise<number>((resolve) =>
    child.on('close', (code, signal) => {
      ended = true;
      resolve(code ?? (signal ? 128 : -1));
    }),
  );
  // Wait until the job runs on the server (the machine may be busy: up to a minute).
  let jobId: string | undefined;
  for (let i = 0; i < 600 && !jobId && !ended; i++) {
    await new Promise((r) => setTimeout(r, 100));
    const jobs = await api<{ jobs: { jobId: string; status: string }[] }>(server(), 'GET', '/api/v1/jobs', undefined, key);
    jobId = jobs.body.jobs.find((j) => j.status === 'running' && (j as { tool?: string }).tool === 'convert-video')?.jobId;
  }
  assert.ok(jobId, `the job never started: ${stderr}`);
  child.kill('SIGINT');
  assert.equal(await exited, 130, stderr);
  const job = await api<{ status: string }>(server(), 'GET', `/api/v1/jobs/${jobId}`, undefined, key);
  assert.equal(job.body.status, 'cancelled');
  assert.ok(!existsSync(path.join(dir, `${name}.webm`)));
  assert.match(stderr, /cancelled 1 job/);
}

describe('kiln remote mode', () => {
  before(async () => {
    srv = await startServer();
    slow = await startServer({ env: { SYNC_WAIT_MS: '0' } });
    apiKey = (await api<{ key: string }>(srv, 'POST', '/api/v1/api-keys', { name: 'test' })).body.key;
  });
  after(async () => {
    await srv?.close();
    await slow?.close();
  });

  it('runs a tool on the server (200) with the same output and --json line as locally', async () => {
    const src = await makeImage(dir, 'r1.jpg', 400, 200);
    const outDir = path.join(dir, 'r1out') + '/';
    const r = await kiln(['resize', src, '--width', '100', '-o', outDir, '--json', '--server', srv.url], { env: env() });
    assert.equal(r.code, 0, r.stderr);
    const line = JSON.parse(r.stdout) as Record<string, unknown>;
    const local = await kiln(['resize', src, '--width', '100', '-o', path.join(dir, 'r1local') + '/', '--json'], { env: env() });
    const localLine = JSON.parse(local.stdout) as Record<string, unknown>;
    for (const k of ['input', 'ok', 'originalSize']) assert.deepEqual(line[k], localLine[k], k);
    assert.equal(path.basename(line.output as string), path.basename(localLine.output as string));
    assert.match(line.jobId as string, /^[0-9a-f]{24}$/);
    const m = await sharp(line.output as string).metadata();
    assert.deepEqual([m.width, m.height, m.format], [100, 50, 'jpeg']);
    assert.equal(line.processedSize, statSync(line.output as string).size);
  });

  it('follows a 202 job over server-sent events, then downloads; KILN_SERVER selects the server', async () => {
    const src = await makeImage(dir, 'r2.png', 300, 300);
    const out = path.join(dir, 'r2-small.png');
    const r = await kiln(['resize', src, '--percentage', '10', '-o', out, '--json'], {
      env: env({
        KILN_SERVER: slow.url,
        KILN_API_KEY: (await api<{ key: string }>(slow, 'POST', '/api/v1/api-keys', { name: 't' })).body.key,
      }),
    });
    assert.equal(r.code, 0, r.stderr);
    const line = JSON.parse(r.stdout) as { ok: boolean; jobId: string };
    assert.ok(line.ok);
    assert.equal((await sharp(out).metadata()).width, 30);
    const job = await api<{ status: string }>(slow, 'GET', `/api/v1/jobs/${line.jobId}`);
    assert.equal(job.body.status, 'completed');
  });

  it('reads stdin and writes stdout remotely', async () => {
    const src = await makeImage(dir, 'r3.png', 40, 20);
    const r = await kiln(['resize', '-', '--width', '20', '-o', '-', '--server', srv.url], { input: readFileSync(src), env: env() });
    assert.equal(r.code, 0, r.stderr + r.stdout);
    const m = await sharp(r.stdoutBuffer).metadata();
    assert.deepEqual([m.width, m.format], [20, 'png']);
  });

  it("shows the server's errors exactly, with the local exit codes; a batch uploads a few at a time", async () => {
    const good = await makeImage(dir, 'e1.png', 50, 50);
    const bad = path.join(dir, 'e2.jpg');
    writeFileSync(bad, 'not an image');
    // The same request straight to the API: the CLI must say what the server said.
    const fd = new FormData();
    fd.append('settings', JSON.stringify({ width: 10 }));
    fd.append('file', new File([readFileSync(bad)], 'e2.jpg'));
    const direct = (await (
      await fetch(`${srv.url}/api/v1/tools/image/resize`, { method: 'POST', body: fd, headers: { authorization: `Bearer ${apiKey}` } })
    ).json()) as { error: { code: string; message: string } };

    const one = await kiln(['resize', bad, '--width', '10', '--server', srv.url, '-o', path.join(dir, 'x.jpg')], { env: env() });
    assert.equal(one.code, 3, one.stderr);
    assert.ok(one.stderr.includes(direct.error.message), one.stderr);
    assert.ok(!existsSync(path.join(dir, 'x.jpg')));

    const v = await kiln(['resize', good, '--width', '-5', '--server', srv.url, '--json'], { env: env() });
    assert.equal(v.code, 2, v.stderr + v.stdout);
    assert.equal((JSON.parse(v.stdout.trim().split('\n').at(-1)!) as { error: { code: string } }).error.code, 'VALIDATION_ERROR');

    const outDir = path.join(dir, 'batch') + '/';
    const b = await kiln(
      [
        'resize',
        good,
        bad,
        await makeImage(dir, 'e3.webp', 60, 60),
        '--width',
        '10',
        '-o',
        outDir,
        '--json',
        '--concurrency',
        '2',
        '--server',
        srv.url,
      ],
      { env: env() },
    );
    assert.equal(b.code, 5, b.stderr);
    const lines = b.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { ok: boolean; input: string; error?: { code: string; message: string } });
    assert.equal(lines.length, 3);
    const failed = lines.find((l) => !l.ok)!.error!;
    assert.deepEqual([failed.code, failed.message], [direct.error.code, direct.error.message]);
    assert.ok(existsSync(path.join(outDir, 'e1.png')) && existsSync(path.join(outDir, 'e3.webp')));
  });

  it('a missing or directory input gets the same error and exit code as a local run, before any upload', async () => {
    const missing = path.join(dir, 'no-such.png');
    const folder = path.join(dir, 'a-dir-input');
    mkdirSync(folder, { recursive: true });
    for (const input of [missing, folder]) {
      const local = await kiln(['resize', input, '--width', '10', '--json', '--local'], { env: env() });
      const remote = await kiln(['resize', input, '--width', '10', '--json', '--server', srv.url], { env: env() });
      assert.equal(remote.code, local.code, remote.stderr);
      const err = (r: { stdout: string }) => (JSON.parse(r.stdout.trim()) as { error: { code: string; message: string } }).error;
      assert.deepEqual(err(remote), err(local));
      // Was "Unable to open file as blob" and "Cannot reach the kiln server … (0)".
      assert.doesNotMatch(remote.stdout + remote.stderr, /blob|Cannot reach/);
    }
  });

  it('a tool with no input file sends its settings as JSON; --file-id is passed to the server', async () => {
    const remote = path.join(dir, 'bc-remote.png');
    const local = path.join(dir, 'bc-local.png');
    const r = await kiln(['barcode-generate', '--text', 'kiln-42', '--scale', '2', '-o', remote, '--server', srv.url], { env: env() });
    assert.equal(r.code, 0, r.stderr);
    const l = await kiln(['barcode-generate', '--text', 'kiln-42', '--scale', '2', '-o', local], { env: env() });
    assert.equal(l.code, 0, l.stderr);
    assert.ok(readFileSync(remote).equals(readFileSync(local)), 'the server and the local run make the same barcode');
    const f = await kiln(['resize', '--file-id', 'lib-item-1', '--width', '10', '--server', srv.url, '--json'], { env: env() });
    const line = JSON.parse(f.stdout.trim()) as { ok: boolean; error: { code: string; message: string } };
    assert.equal(line.ok, false);
    // No such library item: the server's answer comes through verbatim, with the table's exit code.
    const fd = new FormData();
    fd.append('settings', JSON.stringify({ width: 10 }));
    fd.append('fileId', 'lib-item-1');
    const direct = (await (
      await fetch(`${srv.url}/api/v1/tools/image/resize`, { method: 'POST', body: fd, headers: { authorization: `Bearer ${apiKey}` } })
    ).json()) as { error: { code: keyof typeof ERROR_TABLE; message: string } };
    assert.deepEqual([line.error.code, line.error.message], [direct.error.code, direct.error.message]);
    assert.equal(f.code, ERROR_TABLE[direct.error.code].exit);
    const noServer = await kiln(['resize', '--file-id', 'x', '--width', '10'], { env: env() });
    assert.equal(noServer.code, 2);
    assert.match(noServer.stderr, /--file-id names an item of a server's library/);
  });

  it('without a key: UNAUTHORIZED from the server, exit 1 and a hint', async () => {
    const src = await makeImage(dir, 'u.png', 20, 20);
    const r = await kiln(['resize', src, '--width', '10', '--server', srv.url], {
      env: env({ KILN_API_KEY: '', KILN_CREDENTIAL_STORE: 'file' }),
    });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /kiln login/);
    // Every remote command, not only a tool run, and in its --json error too; a refused key says so.
    const noKey = { env: env({ KILN_API_KEY: '', KILN_CREDENTIAL_STORE: 'file' }) };
    for (const args of [
      ['files', 'list'],
      ['jobs', 'list'],
      ['pipeline', 'list'],
    ]) {
      const c = await kiln([...args, '--server', srv.url], noKey);
      assert.equal(c.code, 1, args.join(' '));
      assert.match(c.stderr, new RegExp(`No API key for ${srv.url}: run \`kiln login ${srv.url}\``), args.join(' '));
    }
    const refused = await kiln(['files', 'list', '--server', srv.url, '--json'], { env: env({ KILN_API_KEY: 'kiln_revoked_key' }) });
    assert.equal(refused.code, 1);
    const err = (JSON.parse(refused.stdout) as { error: { code: string; message: string } }).error;
    assert.equal(err.code, 'UNAUTHORIZED');
    assert.match(err.message, /was refused: run `kiln login/);
    const unreachable = await kiln(['resize', src, '--width', '10', '--server', 'http://127.0.0.1:9'], { env: env() });
    assert.equal(unreachable.code, 1);
    assert.match(unreachable.stderr, /Cannot reach the kiln server/);
  });

  it('login from stdin stores a key (0600 file where no keyring), runs with it, logout revokes it', async () => {
    const cfg = path.join(dir, 'cfg-login');
    const e = { XDG_CONFIG_HOME: cfg, KILN_API_KEY: '', KILN_SERVER: '' };
    const wrong = await kiln(['login', srv.url], { env: e, input: `admin\nnot-the-password\n` });
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /Wrong username or password/);
    const r = await kiln(['login', srv.url], { env: e, input: `admin\n${srv.adminPassword}\n` });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(!r.stderr.includes(srv.adminPassword));
    const profile = JSON.parse(readFileSync(path.join(cfg, 'kiln', 'config.json'), 'utf8')) as {
      profiles: { default: { server: string; keyId: string; keyStore: string } };
    };
    assert.equal(profile.profiles.default.server, srv.url);
    let key: string | undefined;
    if (profile.profiles.default.keyStore === 'file') {
      assert.match(r.stderr, /no OS keyring available.*mode 0600/);
      const file = path.join(cfg, 'kiln', 'credentials.json');
      assert.equal(statSync(file).mode & 0o777, 0o600);
      key = Object.values(JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>)[0];
      assert.ok(!readFileSync(path.join(cfg, 'kiln', 'config.json'), 'utf8').includes(key!));
    }
    const keys = await api<{ keys: { id: string; name: string }[] }>(srv, 'GET', '/api/v1/api-keys');
    assert.match(keys.body.keys.find((k) => k.id === profile.profiles.default.keyId)!.name, /^kiln CLI .+@.+/);

    // The profile's server and key now drive every tool command.
    const src = await makeImage(dir, 'l.png', 80, 40);
    const run = await kiln(['resize', src, '--width', '8', '-o', path.join(dir, 'l-out.png')], { env: e });
    assert.equal(run.code, 0, run.stderr);
    assert.equal((await sharp(path.join(dir, 'l-out.png')).metadata()).width, 8);
    assert.equal((await kiln(['config', 'get', 'server'], { env: e })).stdout.trim(), srv.url);
    // --local still runs here.
    const loc = await kiln(['resize', src, '--width', '4', '-o', path.join(dir, 'l-loc.png'), '--local'], { env: e });
    assert.equal(loc.code, 0, loc.stderr);

    const out = await kiln(['logout'], { env: e });
    assert.equal(out.code, 0, out.stderr);
    if (key) {
      assert.equal((await api(srv, 'GET', '/api/v1/jobs', undefined, key)).status, 401);
      assert.deepEqual(JSON.parse(readFileSync(path.join(cfg, 'kiln', 'credentials.json'), 'utf8')), {});
    }
    assert.ok(
      !(await api<{ keys: { id: string }[] }>(srv, 'GET', '/api/v1/api-keys')).body.keys.some(
        (k) => k.id === profile.profiles.default.keyId,
      ),
    );
  });

  it('logout revokes the stored key also when KILN_API_KEY is set in the shell', async () => {
    const cfg = path.join(dir, 'cfg-logout-env');
    const e = { XDG_CONFIG_HOME: cfg, KILN_API_KEY: '', KILN_SERVER: '', KILN_CREDENTIAL_STORE: 'file' };
    const r = await kiln(['login', srv.url], { env: e, input: `admin\n${srv.adminPassword}\n` });
    assert.equal(r.code, 0, r.stderr);
    const stored = Object.values(
      JSON.parse(readFileSync(path.join(cfg, 'kiln', 'credentials.json'), 'utf8')) as Record<string, string>,
    )[0]!;
    assert.equal((await api(srv, 'GET', '/api/auth/session', undefined, stored)).status, 200);
    const out = await kiln(['logout'], { env: { ...e, KILN_API_KEY: apiKey } });
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stderr, /revoked/);
    assert.equal((await api(srv, 'GET', '/api/auth/session', undefined, stored)).status, 401);
    // The shell's own key is not the one revoked.
    assert.equal((await api(srv, 'GET', '/api/auth/session', undefined, apiKey)).status, 200);
  });

  it('logging the profile in to another server revokes its key on the previous one', async () => {
    const cfg = path.join(dir, 'cfg-switch');
    const e = { XDG_CONFIG_HOME: cfg, KILN_API_KEY: '', KILN_SERVER: '', KILN_CREDENTIAL_STORE: 'file' };
    const file = path.join(cfg, 'kiln', 'credentials.json');
    assert.equal((await kiln(['login', srv.url], { env: e, input: `admin\n${srv.adminPassword}\n` })).code, 0);
    const first = Object.values(JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>)[0]!;
    const r = await kiln(['login', slow.url], { env: e, input: `admin\n${slow.adminPassword}\n` });
    assert.equal(r.code, 0, r.stderr);
    assert.equal((await api(srv, 'GET', '/api/auth/session', undefined, first)).status, 401);
    const second = Object.values(JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>);
    assert.equal(second.length, 1);
    assert.equal((await api(slow, 'GET', '/api/auth/session', undefined, second[0])).status, 200);
  });

  it('login asks for the MFA code when the server requires it', async () => {
    const m = await startServer();
    try {
      const enroll = await api<{ secret: string }>(m, 'POST', '/api/auth/mfa/enroll', { password: m.adminPassword });
      assert.equal(enroll.status, 200, JSON.stringify(enroll.body));
      const { TOTP, Secret } = await import('otpauth');
      const totp = new TOTP({ secret: Secret.fromBase32(enroll.body.secret), digits: 6, period: 30, algorithm: 'SHA1' });
      // Enrollment uses the previous period's code (the server accepts ±1 step), login the current one.
      const verify = await api<{ recoveryCodes: string[] }>(m, 'POST', '/api/auth/mfa/verify', {
        code: totp.generate({ timestamp: Date.now() - 30_000 }),
      });
      assert.equal(verify.status, 200, JSON.stringify(verify.body));
      const cfg = path.join(dir, 'cfg-mfa');
      const e = { XDG_CONFIG_HOME: cfg, KILN_API_KEY: '', KILN_SERVER: '', KILN_CREDENTIAL_STORE: 'file' };
      const bad = await kiln(['login', m.url], { env: e, input: `admin\n${m.adminPassword}\n000000\n` });
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /code is wrong/);
      const r = await kiln(['login', m.url], { env: e, input: `admin\n${m.adminPassword}\n${totp.generate()}\n` });
      assert.equal(r.code, 0, r.stderr);
      const key = Object.values(JSON.parse(readFileSync(path.join(cfg, 'kiln', 'credentials.json'), 'utf8')) as Record<string, string>)[0]!;
      assert.equal((await api(m, 'GET', '/api/v1/jobs', undefined, key)).status, 200);
      // Without the third line the CLI says what is missing instead of hanging.
      const none = await kiln(['login', m.url], { env: e, input: `admin\n${m.adminPassword}\n` });
      assert.equal(none.code, 2);
      assert.match(none.stderr, /No answer on stdin for "MFA code/);
      // Someone whose authenticator is lost signs in with a recovery code instead, once.
      const recovery = verify.body.recoveryCodes[0]!;
      const rec = await kiln(['login', m.url], { env: e, input: `admin\n${m.adminPassword}\n${recovery}\n` });
      assert.equal(rec.code, 0, rec.stderr);
      const again = await kiln(['login', m.url], { env: e, input: `admin\n${m.adminPassword}\n${recovery}\n` });
      assert.equal(again.code, 1);
      assert.match(again.stderr, /code is wrong or was already used/);
    } finally {
      await m.close();
    }
  });

  it('config set/get/list with profiles; the profile output directory is the default -o', async () => {
    const e = env();
    assert.equal((await kiln(['config', 'set', 'server', `${srv.url}/`, '--profile', 'work'], { env: e })).code, 0);
    const outDir = path.join(dir, 'profile-out');
    assert.equal((await kiln(['config', 'set', 'output', outDir, '--profile', 'work'], { env: e })).code, 0);
    assert.equal((await kiln(['config', 'get', 'server', '--profile', 'work'], { env: e })).stdout, `${srv.url}\n`);
    const missing = await kiln(['config', 'get', 'server'], { env: e });
    assert.equal(missing.code, 1);
    assert.equal(missing.stdout, '');
    const unknown = await kiln(['config', 'set', 'colour', 'x'], { env: e });
    assert.equal(unknown.code, 2, unknown.stderr);
    const ftp = await kiln(['config', 'set', 'server', 'ftp://x'], { env: e });
    assert.equal(ftp.code, 2, ftp.stderr);
    const list = JSON.parse((await kiln(['config', 'list', '--json'], { env: e })).stdout) as {
      profiles: Record<string, { server: string }>;
    };
    assert.equal(list.profiles.work!.server, srv.url);
    const src = await makeImage(dir, 'p.png', 30, 30);
    const r = await kiln(['resize', src, '--width', '3', '--profile', 'work'], { env: e, cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    assert.equal((await sharp(path.join(outDir, 'p.png')).metadata()).width, 3);
  });

  it('jobs list, get, download and watch', async () => {
    const src = await makeImage(dir, 'j.png', 64, 64);
    const r = await kiln(['resize', src, '--width', '16', '-o', path.join(dir, 'j-out.png'), '--json', '--server', srv.url], {
      env: env(),
    });
    const { jobId } = JSON.parse(r.stdout) as { jobId: string };
    const list = await kiln(['jobs', 'list', '--json', '--server', srv.url], { env: env() });
    assert.equal(list.code, 0, list.stderr);
    assert.ok((JSON.parse(list.stdout) as { jobId: string }[]).some((j) => j.jobId === jobId));
    const human = await kiln(['jobs', 'list', '--server', srv.url], { env: env() });
    assert.match(human.stdout, new RegExp(`${jobId}\\s+resize\\s+completed`), human.stderr);
    assert.match(human.stdout, /^JOB\s+TOOL\s+STATUS\s+CREATED\s+OUTPUT\n/, 'jobs list has a header');
    // --status filters as GET /api/v1/jobs?status= does; a state that does not exist is a usage error.
    const done = await kiln(['jobs', 'list', '--json', '--status', 'completed', '--server', srv.url], { env: env() });
    assert.equal(done.code, 0, done.stderr);
    const doneJobs = JSON.parse(done.stdout) as { jobId: string; status: string }[];
    assert.ok(doneJobs.some((j) => j.jobId === jobId));
    assert.ok(doneJobs.every((j) => j.status === 'completed'));
    const failed = await kiln(['jobs', 'list', '--json', '--status', 'failed', '--server', srv.url], { env: env() });
    assert.equal(failed.code, 0, failed.stderr);
    assert.ok(!(JSON.parse(failed.stdout) as { jobId: string }[]).some((j) => j.jobId === jobId));
    const all = JSON.parse((await kiln(['jobs', 'list', '--json', '--server', srv.url], { env: env() })).stdout) as { jobId: string }[];
    const skipped = await kiln(['jobs', 'list', '--json', '--offset', '1', '--server', srv.url], { env: env() });
    assert.deepEqual(
      (JSON.parse(skipped.stdout) as { jobId: string }[]).map((j) => j.jobId),
      all.slice(1).map((j) => j.jobId),
    );
    for (const bad of [
      ['--status', 'done'],
      ['--offset', '-1'],
    ]) {
      const r = await kiln(['jobs', 'list', ...bad, '--server', srv.url], { env: env() });
      assert.equal(r.code, 2, `${bad}: ${r.stderr}`);
      assert.match(r.stderr, new RegExp(bad[0]));
    }
    const get = await kiln(['jobs', 'get', jobId, '--server', srv.url], { env: env() });
    assert.match(get.stdout, /status\s+completed/);
    const dl = path.join(dir, 'jobdl') + '/';
    mkdirSync(dl);
    const d = await kiln(['jobs', 'download', jobId, '-o', dl, '--server', srv.url], { env: env() });
    assert.equal(d.code, 0, d.stderr);
    assert.equal((await sharp(path.join(dl, 'j.png')).metadata()).width, 16);
    const again = await kiln(['jobs', 'download', jobId, '-o', dl, '--server', srv.url, '--no-clobber'], { env: env() });
    assert.equal(again.code, 2);
    // jobs download writes where -o DIR/ says, created when missing (it used to fail with a raw ENOENT).
    const fresh = path.join(dir, 'jobdl-new', 'sub') + '/';
    const made = await kiln(['jobs', 'download', jobId, '-o', fresh, '--server', srv.url], { env: env() });
    assert.equal(made.code, 0, made.stderr);
    assert.equal((await sharp(path.join(fresh, 'j.png')).metadata()).width, 16);
    const w = await kiln(['jobs', 'watch', jobId, '--json', '--server', srv.url], { env: env() });
    assert.equal(w.code, 0, w.stderr);
    assert.equal((JSON.parse(w.stdout.trim().split('\n').at(-1)!) as { event: string }).event, 'completed');
    const nf = await kiln(['jobs', 'get', 'ffffffffffffffffffffffff', '--server', srv.url], { env: env() });
    assert.equal(nf.code, 1);
    assert.match(nf.stderr, /No job ffffffffffffffffffffffff/);
  });

  it('jobs cancel stops a job started with --async; a job that has ended is a conflict', async () => {
    // Hold every slot of the server's queue so the job waits until the cancel comes.
    const frees: (() => void)[] = [];
    const blockers = Array.from({ length: slow.config.jobConcurrency }, (_, i) =>
      slow.app.kiln.jobs.queue.run(`cancel-blocker-${i}`, () => new Promise<void>((r) => frees.push(r))),
    );
    const free = () => {
      for (const f of frees) f();
    };
    const blocker = Promise.all(blockers);
    try {
      const key = (await api<{ key: string }>(slow, 'POST', '/api/v1/api-keys', { name: 'cancel' })).body.key;
      const as = { env: env({ KILN_API_KEY: key }) };
      const src = await makeImage(dir, 'to-cancel.png', 64, 64);
      const started = await kiln(['resize', src, '--width', '16', '--async', '--server', slow.url], as);
      assert.equal(started.code, 0, started.stderr);
      const id = started.stdout.trim();
      const c = await kiln(['jobs', 'cancel', id, '--json', '--server', slow.url], as);
      assert.equal(c.code, 0, c.stderr);
      assert.equal((JSON.parse(c.stdout) as { status: string }).status, 'cancelled');
      const job = await api<{ status: string; error: { code: string } }>(slow, 'GET', `/api/v1/jobs/${id}`);
      assert.deepEqual([job.body.status, job.body.error.code], ['cancelled', 'CANCELLED']);
      const again = await kiln(['jobs', 'cancel', id, '--server', slow.url], as);
      assert.equal(again.code, ERROR_TABLE.CONFLICT.exit, again.stderr);
      assert.match(again.stderr, /already ended \(cancelled\)/);
      const none = await kiln(['jobs', 'cancel', 'ffffffffffffffffffffffff', '--server', slow.url], as);
      assert.equal(none.code, ERROR_TABLE.NOT_FOUND.exit);
      assert.match(none.stderr, /No job ffffffffffffffffffffffff/);
    } finally {
      free();
      await blocker;
    }
  });

  it('Ctrl-C cancels the remote job and exits 130 (202: the job id is known)', () => ctrlC(() => slow, 'long202'));

  it('Ctrl-C cancels the remote job while the server holds the answer (found by clientJobId)', () => ctrlC(() => srv, 'long200'));
});
