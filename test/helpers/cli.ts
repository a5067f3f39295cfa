/** Runs the real `kiln` binary as a child process. */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  ...(import.meta.url.includes('/dist/') ? ['..'] : []),
);
export const KILN = path.join(REPO, 'bin', 'kiln');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  stdoutBuffer: Buffer;
}

export function kiln(args: string[], opts: { cwd?: string; input?: Buffer | string; env?: NodeJS.ProcessEnv } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [KILN, ...args], { cwd: opts.cwd, env: { ...process.env, ...opts.env } });
    const out: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const buf = Buffer.concat(out);
      resolve({ code: code ?? -1, stdout: buf.toString('utf8'), stderr, stdoutBuffer: buf });
    });
    child.stdin.end(opts.input);
  });
}

/**
 * Starts `kiln args` with its workspaces under `tmpDir`, and sends `signal` once the run has made its
 * workspace (it is processing then) and a moment has passed; resolves with the exit status.
 */
export async function signalMidRun(args: string[], tmpDir: string, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  const child = spawn(process.execPath, [KILN, ...args], { env: { ...process.env, KILN_TMP_DIR: tmpDir } });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  for (let i = 0; i < 300 && readdirSync(tmpDir).length === 0; i++) await new Promise((r) => setTimeout(r, 20));
  if (readdirSync(tmpDir).length === 0) {
    child.kill('SIGKILL');
    throw new Error(`kiln ${args[0]} never made its workspace in ${tmpDir}`);
  }
  await new Promise((r) => setTimeout(r, 300));
  child.kill(signal);
  return exited;
}
