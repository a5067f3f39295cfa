/**
 * A kiln daemon as a real child process (`kiln serve`, through bin/kiln as a user starts it), for the
 * suites that measure its memory, kill it with SIGKILL or load it: an in-process server would share the
 * test's heap and could not be killed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { KILN } from '../helpers/cli.js';
import { login } from '../helpers/server.js';

export interface DaemonProcess {
  url: string;
  pid: number;
  token: string;
  password: string;
  dataDir: string;
  /** The daemon's TMPDIR/KILN_TMP_DIR: every temporary file of the daemon and its engines lands here. */
  tmpDir: string;
  child: ChildProcess;
  /** Output of the daemon so far (for failure messages). */
  output(): string;
  /** SIGKILL to the daemon and its whole process group (its ffmpeg, gs, soffice), as a power cut would. */
  kill9(): Promise<void>;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>;
  /** Removes the data and temporary directories (after stop). */
  remove(): void;
}

export interface DaemonOptions {
  dataDir?: string;
  password?: string;
  env?: Record<string, string>;
}

export async function startDaemon(opts: DaemonOptions = {}): Promise<DaemonProcess> {
  // Not tempDir(): its clean-up is an after() hook, which would run at the end of the before() that starts us.
  const dataDir = opts.dataDir ?? mkdtempSync(path.join(process.env.KILN_TMP_DIR ?? tmpdir(), 'kiln-hard-'));
  const tmpDir = path.join(dataDir, '..', `${path.basename(dataDir)}-tmp`);
  mkdirSync(tmpDir, { recursive: true });
  const password = opts.password ?? randomBytes(12).toString('hex');
  // Through the launcher's shell lines, as `kiln serve` starts for a user: the memory these suites measure
  // is the one of glibc's and V8's settings there (two arenas, 8 MB semi-spaces). Without them a daemon on
  // node 24 came back from the hostile corpus at 1.55× its warm RSS under the full suite's load (V8 held a
  // 200 MB heap for 77 MB of objects). The launcher's `exec node` keeps the pid, the test's node first.
  const child = spawn(KILN, ['serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir], {
    env: {
      ...process.env,
      PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`,
      ADMIN_USERNAME: 'admin',
      ADMIN_PASSWORD: password,
      KILN_HTTP_LOG: 'false',
      KILN_WARM_ENGINES: 'false',
      JOB_CONCURRENCY: '2',
      TMPDIR: tmpDir,
      KILN_TMP_DIR: tmpDir,
      ...opts.env,
    },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`kiln serve did not start: ${out}`)), 30_000);
    const onData = () => {
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    // The banner is on stderr (stdout carries only log lines).
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`kiln serve exited ${code}: ${out}`));
    });
  });
  const token = await login(url, 'admin', password);
  const group = (sig: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, sig);
    } catch {
      // Already gone.
    }
  };
  return {
    url,
    pid: child.pid!,
    token,
    password,
    dataDir,
    tmpDir,
    child,
    output: () => out,
    async kill9() {
      group('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const t = setTimeout(() => group('SIGKILL'), 15_000);
      await exited;
      clearTimeout(t);
    },
    remove() {
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(tmpDir, { recursive: true, force: true });
    },
  };
}

/** Resident set size of a process, in bytes (from /proc). */
export function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

/** Processes whose parent is pid (the engines a daemon has running). */
export function childrenOf(pid: number): number[] {
  const kids: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      // The command name is in parentheses and may hold spaces: fields after it are fixed.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) kids.push(Number(d));
    } catch {
      // Exited while we looked.
    }
  }
  return kids;
}

/** Every file (not directory) under dir, relative, recursively. */
export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, rel: string) => {
    let entries: import('node:fs').Dirent[];
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(path.join(d, e.name), r);
      else out.push(r);
    }
  };
  walk(dir, '');
  return out;
}

/** Samples GET /api/v1/health every `everyMs` until stopped; returns the latencies in ms (Infinity for a failure). */
export function sampleHealth(url: string, everyMs = 200): { stop: () => Promise<number[]> } {
  const times: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const t0 = performance.now();
      try {
        const r = await fetch(`${url}/api/v1/health`, { signal: AbortSignal.timeout(5000) });
        await r.arrayBuffer();
        times.push(r.status === 200 ? performance.now() - t0 : Number.POSITIVE_INFINITY);
      } catch {
        times.push(Number.POSITIVE_INFINITY);
      }
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return times;
    },
  };
}

/** Polls a job until it is no longer queued or running. */
export async function settle(
  url: string,
  token: string,
  jobId: string,
  timeoutMs = 120_000,
): Promise<{ status: string; error?: { code: string; message: string; reason?: string } }> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const r = await fetch(`${url}/api/v1/jobs/${jobId}`, { headers: { authorization: `Bearer ${token}` } });
    const j = (await r.json()) as { status: string; error?: { code: string; message: string } };
    if (j.status !== 'queued' && j.status !== 'running') return j;
    if (Date.now() > end) throw new Error(`job ${jobId} still ${j.status} after ${timeoutMs} ms`);
    await new Promise((res) => setTimeout(res, 200));
  }
}
