/** Tab completion of a file path typed in the interactive mode: like a shell, without the shell. */
import { readdirSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface Completion {
  /** The input after completion (unchanged when nothing matches). */
  value: string;
  /** Names that match when there are several (shown under the input). */
  candidates: string[];
}

function expandHome(p: string): string {
  return p === '~' || p.startsWith('~/') ? path.join(os.homedir(), p.slice(1)) : p;
}

export function completePath(input: string, cwd = process.cwd()): Completion {
  const slash = input.lastIndexOf('/');
  const dirPart = slash >= 0 ? input.slice(0, slash + 1) : '';
  const prefix = slash >= 0 ? input.slice(slash + 1) : input;
  const dir = path.resolve(cwd, expandHome(dirPart || '.'));
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return { value: input, candidates: [] };
  }
  // Hidden files only when asked for with a leading dot.
  const matches = names.filter((n) => n.startsWith(prefix) && (prefix.startsWith('.') || !n.startsWith('.'))).sort();
  if (matches.length === 0) return { value: input, candidates: [] };
  const isDir = (n: string) => {
    try {
      return statSync(path.join(dir, n)).isDirectory();
    } catch {
      return false;
    }
  };
  if (matches.length === 1) {
    const n = matches[0]!;
    return { value: dirPart + n + (isDir(n) ? '/' : ''), candidates: [] };
  }
  let common = matches[0]!;
  for (const m of matches) while (!m.startsWith(common)) common = common.slice(0, -1);
  return { value: dirPart + common, candidates: matches.map((n) => n + (isDir(n) ? '/' : '')) };
}
