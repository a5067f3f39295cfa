/**
 * `kiln serve` as a real child process (for what only a process shows: signals, exit codes, the
 * engines it leaves behind), and the processes on this machine whose command line names a path.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { KILN } from './cli.js';

export interface DaemonProcess {
  child: ChildProcessWithoutNullStreams;
  /** The exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  url: string;
  /** Authorization header of the signed-in admin (empty with `signIn: false`). */
  auth: { authorization: string };
  stderr(): string;
  /** What it printed on stdout (V8's traces, with `nodeFlags`). */
  stdout(): string;
}

/** The test runner's environment without the variables that would point the daemon elsewhere. */
export function daemonEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, KILN_HTTP_LOG: 'false', ...extra };
  for (const k of ['ADMIN_PASSWORD', 'DATABASE_URL', 'REDIS_URL', 'AUTH_ENABLED', 'PORT', 'HOST']) if (!(k in extra)) delete env[k];
  return env;
}

/**
 * Starts `kiln serve --port 0` on `dataDir`, waits for its listening line and signs the admin in.
 * `signIn: false` returns at the listening line, for a test that must act on what starts with the
 * daemon (a sign-in's password hashing took long enough under load to miss a short engine step).
 * `nodeFlags` go to node before the program (V8 flags NODE_OPTIONS does not take, such as --trace-gc);
 * `node` is another node binary than this one.
 */
export async function startDaemonProcess(
  dataDir: string,
  env: Record<string, string> = {},
  opts: { signIn?: boolean; nodeFlags?: string[]; node?: string } = {},
): Promise<DaemonProcess> {
  const password = 'Daemon-Admin-Pass-42';
  const child = spawn(opts.node ?? process.execPath, [...(opts.nodeFlags ?? []), KILN, 'serve', '--port', '0', '--data-dir', dataDir], {
    env: daemonEnv({ ADMIN_PASSWORD: password, ...env }),
  });
  let err = '';
  child.stderr.on('data', (b: Buffer) => (err += b));
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line: ${err}`)), 120_000);
    const look = () => {
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stderr.on('data', look);
    exited.then(() => reject(new Error(`exited early: ${err}`)));
  });
  if (opts.signIn === false) return { child, exited, url, auth: { authorization: '' }, stderr: () => err, stdout: () => out };
  const login = await fetch(`${url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password }),
  });
  const token = ((await login.json()) as { token: string }).token;
  return { child, exited, url, auth: { authorization: `Bearer ${token}` }, stderr: () => err, stdout: () => out };
}

/** Live processes (pid and command line) whose command line contains `marker`. */
export function processesNaming(marker: string): { pid: number; cmd: string }[] {
  const found: { pid: number; cmd: string }[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let cmd: string;
    try {
      cmd = readFileSync(path.join('/proc', name, 'cmdline'), 'utf8')
        .split('\0')
        .join(' ');
      // A zombie has an empty command line and is gone as soon as its parent reaps it.
      if (readFileSync(path.join('/proc', name, 'stat'), 'utf8').includes(') Z ')) continue;
    } catch {
      continue; // exited meanwhile
    }
    if (cmd.includes(marker)) found.push({ pid: Number(name), cmd });
  }
  return found;
}
