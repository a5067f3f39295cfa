/**
 * Workspaces: a private temp directory per run, removed afterwards whatever happened, so failed runs
 * leave nothing behind.
 */
import { mkdtemp, readdir, rm, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface Workspace {
  dir: string;
  /** A subdirectory, created on demand. */
  sub(name: string): Promise<string>;
  /**
   * Empties the workspace for the next run and keeps its directories (their contents go): a batch that
   * reuses one workspace per worker makes no directory per item. With `keep`, only the top-level
   * directories it names stay; other directories go too (a long-lived workspace would otherwise gather
   * the uniquely named ones some runs make).
   */
  clear(keep?: ReadonlySet<string>): Promise<void>;
  dispose(): Promise<void>;
}

/** Where runs make their workspaces: KILN_TMP_DIR, else the OS temp dir (read at each call). */
export function workspaceRoot(): string {
  return process.env.KILN_TMP_DIR || tmpdir();
}

export async function createWorkspace(root = workspaceRoot(), prefix = 'kiln-'): Promise<Workspace> {
  await mkdir(root, { recursive: true });
  const dir = await mkdtemp(path.join(root, prefix));
  let disposed = false;
  return {
    dir,
    async sub(name: string) {
      const p = path.join(dir, name);
      await mkdir(p, { recursive: true });
      return p;
    },
    async clear(keep?: ReadonlySet<string>) {
      await emptyDir(dir, keep);
    },
    async dispose() {
      if (disposed) return;
      disposed = true;
      await rm(dir, { recursive: true, force: true, maxRetries: 3 });
    },
  };
}

/**
 * Removes what `dir` holds and keeps its subdirectories, emptied. Creating a directory is the costly part
 * of a small run's file work: ext4 searches its inode tables for a free inode, and on a file system
 * without a journal (cloud images often have none) it skips each recently deleted one, reading the table
 * block to tell. Traced on a daemon doing 64×64 resizes, the two mkdirs and the one file create of a job
 * were a quarter of its CPU.
 */
async function emptyDir(dir: string, keep?: ReadonlySet<string>): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  await Promise.all(
    entries.map((e) =>
      e.isDirectory() && (!keep || keep.has(e.name))
        ? emptyDir(path.join(dir, e.name))
        : rm(path.join(dir, e.name), { recursive: true, force: true, maxRetries: 3 }),
    ),
  );
}

/** Runs fn with a fresh workspace and always removes it. */
export async function withWorkspace<T>(fn: (ws: Workspace) => Promise<T>, root?: string): Promise<T> {
  const ws = await createWorkspace(root);
  try {
    return await fn(ws);
  } finally {
    await ws.dispose();
  }
}
