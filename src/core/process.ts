/**
 * Child processes: always an argument array (never a shell string), a time-out, killed on abort,
 * stderr kept (its tail goes into the error message).
 */
import { spawn } from 'node:child_process';
import type { EventEmitter } from 'node:events';
import type { Readable, Writable } from 'node:stream';
import { diskFull, type ErrorCode, KilnError, overResourceLimit } from './errors.js';
import { loadPosixSpawn, type PosixSpawner } from './posix-spawn.js';

export interface ExecOptions {
  cwd?: string;
  signal?: AbortSignal;
  /** Milliseconds; default 10 minutes. */
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  /** Data written to stdin, then stdin is closed. */
  input?: string | Buffer;
  /** Called with each complete stdout line (progress parsing). */
  onStdoutLine?: (line: string) => void;
  onStderrLine?: (line: string) => void;
  /** Keep stdout as a Buffer (binary output). */
  binary?: boolean;
  /** Exit codes that count as success (default [0]). */
  okCodes?: number[];
  /** Error code used when the program fails (default INTERNAL; tools often pass UNSUPPORTED_INPUT). */
  failCode?: ErrorCode;
  /** Largest stdout kept in memory, bytes (default 64 MiB). */
  maxStdout?: number;
}

export interface ExecResult {
  code: number;
  stdout: string;
  stdoutBuffer: Buffer;
  stderr: string;
}

const STDERR_KEEP = 64 * 1024;

/** What exec() needs of a child, whichever way it started: node's ChildProcess and SpawnedChild both are one. */
export interface Child extends EventEmitter {
  stdin: Writable;
  stdout: Readable;
  stderr: Readable;
  exitCode: number | null;
  signalCode: NodeJS.Signals | null;
  kill(signal?: NodeJS.Signals): boolean;
}

/**
 * node's spawn forks, holding the event loop for a time that grows with the process's memory (~4 ms at
 * 150 MB, ~27 ms at 900 MB); posix_spawn does not (src/core/posix-spawn.ts). Loading koffi for it costs
 * ~10 ms, so children start with node's spawn until the forks have cost this much in all: a CLI run of
 * one tool never pays the load, a daemon or a 20-file merge switches after a few children.
 * KILN_SPAWN=fork keeps node's spawn throughout, KILN_SPAWN=posix uses posix_spawn from the first child.
 */
const FORK_BUDGET_MS = 10;
let forkMs = 0;
let spawner: PosixSpawner | null | undefined;

/** A child with its three stdio streams as pipes, started the cheaper way (above). */
export function startChild(cmd: string, args: string[], o: { cwd?: string; env: NodeJS.ProcessEnv }): Child {
  const mode = process.env.KILN_SPAWN;
  if (spawner === undefined && mode !== 'fork' && (mode === 'posix' || forkMs >= FORK_BUDGET_MS)) spawner = loadPosixSpawn();
  const fast = mode === 'fork' ? undefined : spawner?.spawn(cmd, args, o);
  if (fast) return fast;
  const t = performance.now();
  const child = spawn(cmd, args, { cwd: o.cwd, env: o.env, stdio: ['pipe', 'pipe', 'pipe'] });
  forkMs += performance.now() - t;
  return child as Child;
}

export function exec(cmd: string, args: string[], opts: ExecOptions = {}): Promise<ExecResult> {
  const { signal, timeoutMs = 600_000, okCodes = [0], maxStdout = 64 * 1024 * 1024 } = opts;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new KilnError('CANCELLED', 'The run was cancelled.'));
    const child = startChild(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env });
    const out: Buffer[] = [];
    let outLen = 0;
    let stderr = '';
    let settled = false;
    let killedFor: 'timeout' | 'abort' | 'stdout' | undefined;

    const kill = (why: 'timeout' | 'abort' | 'stdout') => {
      killedFor ??= why;
      child.kill('SIGTERM');
      // A program that ignores SIGTERM gets SIGKILL shortly after.
      setTimeout(() => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'), 2000).unref();
    };
    const timer = setTimeout(() => kill('timeout'), timeoutMs);
    timer.unref();
    const onAbort = () => kill('abort');
    signal?.addEventListener('abort', onAbort, { once: true });

    lineSplitter(child.stdout, opts.onStdoutLine, (chunk) => {
      outLen += chunk.length;
      if (outLen > maxStdout) return kill('stdout');
      out.push(chunk);
    });
    lineSplitter(child.stderr, opts.onStderrLine, (chunk) => {
      stderr += chunk.toString('utf8');
      if (stderr.length > STDERR_KEEP * 2) stderr = stderr.slice(-STDERR_KEEP);
    });

    child.stdin.on('error', () => {
      /* the program may exit before reading all input; its exit code tells what happened */
    });
    if (opts.input !== undefined) child.stdin.end(opts.input);
    else child.stdin.end();

    const finish = (err: Error | undefined, code: number) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (err) return reject(err);
      const stdoutBuffer = Buffer.concat(out);
      const result: ExecResult = { code, stdout: opts.binary ? '' : stdoutBuffer.toString('utf8'), stdoutBuffer, stderr };
      if (killedFor === 'abort') return reject(new KilnError('CANCELLED', 'The run was cancelled.'));
      if (killedFor === 'timeout')
        return reject(new KilnError('TIMEOUT', `${baseName(cmd)} took longer than ${Math.round(timeoutMs / 1000)} s and was stopped.`));
      if (killedFor === 'stdout') return reject(new KilnError('LIMIT_EXCEEDED', `${baseName(cmd)} wrote more than ${maxStdout} bytes.`));
      if (!okCodes.includes(code)) {
        // A full disk is never the input's fault, whatever failCode the tool gave; an image past the
        // program's own resource limits is over a limit, not corrupt.
        const overLimit = !diskFull(stderr) && overResourceLimit(stderr);
        return reject(
          new KilnError(
            diskFull(stderr) ? 'UNAVAILABLE' : overLimit ? 'LIMIT_EXCEEDED' : (opts.failCode ?? 'INTERNAL'),
            `${baseName(cmd)} ${overLimit ? 'found the input over its resource limits' : 'failed'} (exit ${code}): ${tail(stderr) || tail(result.stdout) || 'no message'}`,
            {
              details: { program: baseName(cmd), exitCode: code },
            },
          ),
        );
      }
      resolve(result);
    };
    child.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT')
        finish(new KilnError('ENGINE_MISSING', `${cmd} is not installed. Run \`kiln doctor\` to see how to install it.`), -1);
      else finish(e, -1);
    });
    child.on('close', (code, sig) => finish(undefined, code ?? (sig ? 128 : -1)));
  });
}

function lineSplitter(stream: NodeJS.ReadableStream, onLine: ((l: string) => void) | undefined, onChunk: (b: Buffer) => void) {
  let pending = '';
  stream.on('data', (chunk: Buffer) => {
    onChunk(chunk);
    if (!onLine) return;
    pending += chunk.toString('utf8');
    let i: number;
    while ((i = pending.search(/\r?\n|\r/)) >= 0) {
      const line = pending.slice(0, i);
      pending = pending.slice(pending[i] === '\r' && pending[i + 1] === '\n' ? i + 2 : i + 1);
      onLine(line);
    }
  });
  stream.on('end', () => {
    if (onLine && pending) onLine(pending);
  });
}

function baseName(cmd: string): string {
  return cmd.split('/').pop() ?? cmd;
}

/** Last meaningful lines of a program's output, for error messages. */
export function tail(s: string, lines = 3): string {
  return s
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean)
    .slice(-lines)
    .join(' | ')
    .slice(0, 600);
}
