/**
 * `kiln serve` as its own process (bin/kiln, as an operator runs it), for what an in-process server
 * cannot show: the daemon's resident memory, its engine child processes, and request overhead without
 * the bench's own work on the same event loop.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BENCH_PASSWORD, benchApiKey, KILN_BIN } from './lib.js';

export interface ServeProcess {
  base: string;
  pid: number;
  /** Authorization header with an API key of the admin user. */
  auth: { authorization: string };
  /** Resident set of the daemon process alone, MiB. */
  rssMb(): number;
  /** Resident sets of its child processes (soffice.bin, chromium…), MiB, by command name. */
  childrenMb(): Record<string, number>;
  stop(): Promise<void>;
}

const PASSWORD = BENCH_PASSWORD;

function statusKb(pid: number, field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : 0;
}

/** Descendants of `pid` (Chromium's helpers are grandchildren). */
function descendants(pid: number): { pid: number; comm: string }[] {
  const parent = new Map<number, number>();
  const comm = new Map<number, string>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const st = readFileSync(`/proc/${d}/stat`, 'utf8');
      const m = /\) \S (\d+)/.exec(st);
      if (!m) continue;
      parent.set(Number(d), Number(m[1]));
      comm.set(Number(d), st.slice(st.indexOf('(') + 1, st.lastIndexOf(')')));
    } catch {
      /* gone */
    }
  }
  const out: { pid: number; comm: string }[] = [];
  const walk = (p: number) => {
    for (const [c, pp] of parent) {
      if (pp !== p) continue;
      out.push({ pid: c, comm: comm.get(c)! });
      walk(c);
    }
  };
  walk(pid);
  return out;
}

/** `viaNode`: start it as `node bin/kiln serve`, which skips the launcher's shell preamble (for comparisons). */
export async function startServe(env: NodeJS.ProcessEnv = {}, opts: { viaNode?: boolean } = {}): Promise<ServeProcess> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'kiln-bench-serve-'));
  // Answers come back in the request (no 202 + polling) even on a loaded machine.
  const childEnv: NodeJS.ProcessEnv = { ...process.env, KILN_HTTP_LOG: 'false', ADMIN_PASSWORD: PASSWORD, SYNC_WAIT_MS: '300000', ...env };
  for (const k of ['DATABASE_URL', 'REDIS_URL', 'PORT', 'HOST']) if (!(k in env)) delete childEnv[k];
  // bin/kiln run as a program, as an operator starts it: its shell preamble sets glibc's malloc tunables.
  const argv = ['serve', '--port', '0', '--data-dir', dataDir];
  const child: ChildProcess = spawn(opts.viaNode ? process.execPath : KILN_BIN, opts.viaNode ? [KILN_BIN, ...argv] : argv, {
    env: childEnv,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  // A daemon that never listens (a bad flag, a port in use) leaves no data dir behind.
  const base = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`kiln serve did not listen: ${err.slice(0, 300)}`)), 60_000);
    child.stderr!.on('data', (b: Buffer) => {
      err += b.toString();
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`kiln serve exited ${code}: ${err.slice(0, 300)}`));
    });
  }).catch((e: unknown) => {
    child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
    throw e;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // The bench ending without stop() (Ctrl-C, process.exit after a failed row): the daemon goes too, and its data dir.
  const abandon = () => {
    child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  };
  process.once('exit', abandon);
  const key = await benchApiKey(base, PASSWORD);
  const pid = child.pid!;
  return {
    base,
    pid,
    auth: { authorization: `Bearer ${key}` },
    rssMb: () => statusKb(pid, 'VmRSS') / 1024,
    childrenMb() {
      const out: Record<string, number> = {};
      for (const c of descendants(pid)) {
        try {
          out[c.comm] = (out[c.comm] ?? 0) + statusKb(c.pid, 'VmRSS') / 1024;
        } catch {
          /* gone */
        }
      }
      return out;
    },
    async stop() {
      process.off('exit', abandon);
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(t);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The daemon's resident memory once it has settled (kiln serve lets V8 shrink its start-up heap 10 s
 * after listening): samples every second for `settleS` seconds, the median of the last 5.
 */
export async function settledRssMb(s: ServeProcess, settleS = 45): Promise<number> {
  const samples: number[] = [];
  const end = Date.now() + settleS * 1000;
  while (Date.now() < end) {
    await new Promise((r) => setTimeout(r, 1000));
    samples.push(s.rssMb());
  }
  const last = samples.slice(-5).sort((a, b) => a - b);
  return last[last.length >> 1]!;
}
