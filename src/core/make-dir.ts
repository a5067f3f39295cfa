/**
 * `mkdir -p` for directories a user or an admin names (-o, watch and output folders). Node's own
 * `mkdir(dir, { recursive: true })` never returns under /proc or /sys: there mkdir answers ENOENT for a
 * child whose parent exists, and node retries the parent and the child without end, a pool thread
 * spinning at full CPU (node 20–24, sync and async alike). Here each missing level is made once, from
 * the deepest existing ancestor down, and the first refusal is the answer.
 */
import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';

export async function makeDir(dir: string, mode?: number): Promise<void> {
  const missing: string[] = [];
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    const st = await stat(d).catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return undefined;
      throw e;
    });
    if (st) {
      if (st.isDirectory()) break;
      throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${dir}' (${d} is a file)`), { code: 'ENOTDIR', path: d });
    }
    missing.unshift(d);
    if (path.dirname(d) === d) break;
  }
  for (const d of missing)
    await mkdir(d, mode === undefined ? undefined : { mode }).catch(async (e: NodeJS.ErrnoException) => {
      // Made meanwhile by someone else (two outputs into one new folder): fine if it is a directory.
      if (e.code === 'EEXIST' && (await stat(d).catch(() => undefined))?.isDirectory()) return;
      throw e;
    });
}
