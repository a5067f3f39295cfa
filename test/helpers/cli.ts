/** Runs the real `kiln` binary as a child process. */
import { spawn } from 'node:child_process';
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
