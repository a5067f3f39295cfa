/**
 * What every family bench shares: where fixtures and outputs go, a timer that turns a failing engine
 * into one printed line (so one missing codec does not abort the whole run), ratios, and the three
 * ways of running kiln (in process through runTool, the CLI as a process, and raw commands).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createWorkspace } from '../src/core/workspace.js';
import { getTool } from '../src/tools/index.js';
import { inputFile, runTool, type RunOutcome } from '../src/tools/run-tool.js';

/** The repository root, from bench/ as source (tsx) or as dist/bench/ (compiled). */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', ...(import.meta.url.includes('/dist/') ? ['..'] : []));
export const KILN_BIN = path.join(ROOT, 'bin', 'kiln');

export interface BenchOptions {
  /** Timed iterations per case (after one untimed warm-up unless a case says otherwise). */
  n: number;
  /** Smoke mode (the test): only each family's smallest case, tiny inputs, no warm-up. */
  smoke: boolean;
  /** BENCH_QUICK: heavy cases (seconds per op) run once without warm-up. */
  quick?: boolean;
  /** Generated inputs; kept between runs (bench/fixtures, gitignored). */
  fixDir: string;
  /** Scratch outputs, removed by the caller. */
  outDir: string;
  /** Where each line goes (the test collects it instead of printing). */
  print: (line: string) => void;
}

export interface FamilyResult {
  family: string;
  /** ms per operation by case key. */
  ms: Record<string, number>;
  /** One line per case whose engine failed or is missing. */
  failures: string[];
  ratios: Record<string, number>;
}

/** Repetitions for a case that takes seconds per op: the work dominates, so few runs are enough. */
export function heavy(o: BenchOptions): { n: number; warmup: boolean } {
  return o.quick ? { n: 1, warmup: false } : { n: Math.min(o.n, 3), warmup: true };
}

/** [key, label, one operation (i = round, -1 for the warm-up)] */
export type Side = [string, string, (i: number) => Promise<unknown> | unknown];

export class Bench {
  readonly result: FamilyResult;

  constructor(
    readonly o: BenchOptions,
    family: string,
  ) {
    this.result = { family, ms: {}, failures: [], ratios: {} };
  }

  heading(text: string): void {
    this.o.print(`\n${text}`);
  }

  /**
   * Times `fn` n times (after a warm-up unless `warmup: false`, and never in smoke mode) and prints
   * ms/op. A throw prints `FAILED` with the first line of the error and the run goes on.
   */
  async time(
    key: string,
    label: string,
    fn: (i: number) => Promise<unknown> | unknown,
    opts: { n?: number; warmup?: boolean } = {},
  ): Promise<number | undefined> {
    const n = this.o.smoke ? 1 : (opts.n ?? this.o.n);
    try {
      if (opts.warmup !== false && !this.o.smoke) await fn(-1);
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < n; i++) await fn(i);
      const ms = Number(process.hrtime.bigint() - t0) / 1e6 / n;
      this.result.ms[key] = ms;
      this.o.print(`  ${label.padEnd(46)} ${ms.toFixed(1).padStart(9)} ms/op`);
      return ms;
    } catch (e) {
      const msg = ((e as Error).message ?? String(e)).split('\n').find((l) => l.trim()) ?? 'failed';
      this.result.failures.push(`${key}: ${msg}`);
      this.o.print(`  ${label.padEnd(46)}    FAILED  ${msg.slice(0, 160)}`);
      return undefined;
    }
  }

  /**
   * Several ways of doing the same work, interleaved: each round runs every side once, so load from
   * other processes on a shared machine drifts over all sides alike instead of favouring whichever ran
   * in a quiet minute. Prints ms/op per side in the order given; a side that throws prints FAILED
   * and drops out of the later rounds. Falsy entries (optional peers) are ignored.
   */
  async compare(sides: (Side | false | undefined)[], opts: { n?: number; warmup?: boolean } = {}): Promise<void> {
    const n = this.o.smoke ? 1 : (opts.n ?? this.o.n);
    const live = sides.filter((x): x is Side => !!x).map((side) => ({ side, total: 0, error: undefined as string | undefined }));
    const attempt = async (r: (typeof live)[number], i: number) => {
      if (r.error) return;
      const t0 = process.hrtime.bigint();
      try {
        await r.side[2](i);
        if (i >= 0) r.total += Number(process.hrtime.bigint() - t0) / 1e6;
      } catch (e) {
        r.error = ((e as Error).message ?? String(e)).split('\n').find((l) => l.trim()) ?? 'failed';
      }
    };
    if (opts.warmup !== false && !this.o.smoke) for (const r of live) await attempt(r, -1);
    for (let i = 0; i < n; i++) for (const r of live) await attempt(r, i);
    for (const r of live) {
      const [key, label] = r.side;
      if (r.error) {
        this.result.failures.push(`${key}: ${r.error}`);
        this.o.print(`  ${label.padEnd(46)}    FAILED  ${r.error.slice(0, 160)}`);
      } else {
        this.result.ms[key] = r.total / n;
        this.o.print(`  ${label.padEnd(46)} ${(r.total / n).toFixed(1).padStart(9)} ms/op`);
      }
    }
  }

  /** A case that cannot run here (engine not installed): said once, not counted as a failure. */
  skip(label: string, why: string): void {
    this.o.print(`  ${label.padEnd(46)}   skipped  ${why}`);
  }

  /** Prints a / b for the cases that both ran. Above 1: the first is slower. */
  ratio(a: string, b: string, note = ''): void {
    const x = this.result.ms[a];
    const y = this.result.ms[b];
    if (x === undefined || y === undefined) return;
    const r = x / y;
    this.result.ratios[`${a}/${b}`] = r;
    this.o.print(`  ${`${a} / ${b}`.padEnd(46)} ${r.toFixed(2).padStart(9)}x${note ? '  ' + note : ''}`);
  }

  ratios(pairs: [string, string, string?][]): void {
    if (!pairs.some(([a, b]) => this.result.ms[a] !== undefined && this.result.ms[b] !== undefined)) return;
    this.o.print('  ratios (above 1 = the first is slower):');
    for (const [a, b, note] of pairs) this.ratio(a, b, note);
  }
}

/** Runs a command to completion; throws with the start of stderr when it fails. */
export function sh(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): string {
  const r = spawnSync(cmd, args, {
    cwd: opts.cwd,
    env: opts.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: opts.timeoutMs ?? 600_000,
    maxBuffer: 64 << 20,
  });
  if (r.error) throw new Error(`${path.basename(cmd)}: ${r.error.message}`);
  if (r.status !== 0)
    throw new Error(
      `${path.basename(cmd)} exited ${r.status ?? r.signal}: ${(r.stderr?.toString() || r.stdout?.toString() || '').trim().slice(0, 300)}`,
    );
  return r.stdout.toString() + r.stderr.toString();
}

/**
 * The same as sh() but asynchronous, for commands timed while kiln keeps warm helpers (Chromium,
 * LibreOffice) in this process: a blocked event loop would stall their pipes.
 */
export function shAsync(
  cmd: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 600_000);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`${path.basename(cmd)}: ${e.message}`));
    });
    child.on('close', (code, sig) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`${path.basename(cmd)} exited ${code ?? sig}: ${out.trim().slice(0, 300)}`));
    });
  });
}

export function have(bin: string): boolean {
  return spawnSync('sh', ['-c', 'command -v "$1"', 'sh', bin], { stdio: 'ignore' }).status === 0;
}

/** The kiln CLI as a script would call it: one node process per invocation. */
export function kilnCli(args: string[], opts: { cwd?: string } = {}): Promise<string> {
  return shAsync(process.execPath, [KILN_BIN, ...args], opts);
}

/** One tool run in this process, as the daemon does it; checks an output came back. */
export async function kilnRun(
  o: BenchOptions,
  toolId: string,
  files: string[],
  settings: Record<string, unknown> = {},
): Promise<RunOutcome> {
  const tool = getTool(toolId);
  const ws = await createWorkspace(o.outDir, 'run-');
  try {
    const inputs = { files: await Promise.all(files.map((f) => inputFile(f))), extra: {} };
    const r = await runTool(tool, inputs, settings, { workDir: ws.dir, dataDir: path.join(o.outDir, 'data') });
    if (!r.output || r.processedSize === 0) throw new Error(`${toolId} returned no output`);
    return r;
  } finally {
    await ws.dispose();
  }
}

/** Throws unless `p` exists and is not empty: a raw command that "succeeds" without output is a failure. */
export function requireOutput(p: string): void {
  if (!existsSync(p) || statSync(p).size === 0) throw new Error(`no output at ${p}`);
}

export function dir(...parts: string[]): string {
  const d = path.join(...parts);
  mkdirSync(d, { recursive: true });
  return d;
}

/** The admin password the bench daemons start with. */
export const BENCH_PASSWORD = 'bench-admin-password-1';

/** Signs in as the bench admin and makes an API key: the bench's requests then carry no session. */
export async function benchApiKey(base: string, password = BENCH_PASSWORD): Promise<string> {
  const post = async (route: string, body: unknown, token?: string) =>
    (
      await fetch(`${base}${route}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify(body),
      })
    ).json();
  const login = (await post('/api/auth/login', { username: 'admin', password })) as { token: string };
  return ((await post('/api/v1/api-keys', { name: 'bench' }, login.token)) as { key: string }).key;
}

/** A tool request as one multipart body built once (settings, then the JPEG `file`), for load loops. */
export function multipart(file: Buffer, name: string, settings: object): { body: Buffer; type: string } {
  const boundary = `----kilnbench${Math.random().toString(16).slice(2)}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="settings"\r\n\r\n${JSON.stringify(settings)}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: image/jpeg\r\n\r\n`,
  );
  return { body: Buffer.concat([head, file, Buffer.from(`\r\n--${boundary}--\r\n`)]), type: `multipart/form-data; boundary=${boundary}` };
}
