/**
 * Workspaces: a private temp directory per run, removed afterwards whatever happened, so failed runs
 * leave nothing behind.
 */
import { mkdtemp, rm, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface Workspace {
  dir: string;
  /** A subdirectory, created on demand. */
  sub(name: string): Promise<string>;
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
    async dispose() {
      if (disposed) return;
      disposed = true;
      await rm(dir, { recursive: true, force: true, maxRetries: 3 });
    },
  };
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
