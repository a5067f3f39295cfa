/**
 * Where the CLI writes each output. Rules (README "Output files"):
 * - `-o FILE`: exactly there (one input only).
 * - `-o DIR/` (trailing slash or an existing directory): DIR/<output name>, DIR created if needed.
 * - no -o: the current directory, under the output's own name; if that would hit the input or an
 *   existing file, `<stem>-<tool>.<ext>` instead.
 * - an input is never overwritten unless --force.
 */
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { KilnError } from '../core/errors.js';
import { stem } from '../core/paths.js';

export interface OutputTarget {
  /** '-' = stdout */
  kind: 'file' | 'dir' | 'stdout' | 'default';
  path?: string;
}

export function parseOutputOption(o: string | undefined, inputCount: number): OutputTarget {
  if (o === undefined) return { kind: 'default' };
  if (o === '-') {
    if (inputCount > 1) throw new KilnError('USAGE_ERROR', '-o - (stdout) takes a single input.');
    return { kind: 'stdout' };
  }
  const isDir = o.endsWith('/') || o.endsWith(path.sep) || (existsSync(o) && statSync(o).isDirectory());
  if (isDir) return { kind: 'dir', path: path.resolve(o) };
  if (inputCount > 1) throw new KilnError('USAGE_ERROR', `Several inputs need an output directory: -o ${o}/`);
  return { kind: 'file', path: path.resolve(o) };
}

export function resolveOutputPath(
  target: OutputTarget,
  outputName: string,
  toolId: string,
  inputPaths: string[],
  force: boolean,
  defaultDir = process.cwd(),
): string {
  const inputs = new Set(inputPaths.map((p) => path.resolve(p)));
  let p: string;
  if (target.kind === 'file') p = target.path!;
  else if (target.kind === 'dir') p = path.join(target.path!, outputName);
  else {
    p = path.resolve(defaultDir, outputName);
    if (inputs.has(p) || existsSync(p)) {
      const ext = path.extname(outputName);
      p = path.resolve(defaultDir, `${stem(outputName)}-${toolId}${ext}`);
    }
  }
  if (inputs.has(p) && !force) {
    throw new KilnError(
      'OUTPUT_EXISTS',
      `Refusing to overwrite the input ${path.relative(process.cwd(), p) || p}; choose another -o or pass --force.`,
    );
  }
  return p;
}
