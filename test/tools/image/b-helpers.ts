/** Shared by the b-*.test.ts suites: run a tool through runTool in a throw-away workspace. */
import { cpSync, mkdtempSync } from 'node:fs';
import path from 'node:path';
import { getTool } from '../../../src/tools/index.js';
import { inputFile, runTool, type RunOutcome } from '../../../src/tools/run-tool.js';
import { createWorkspace } from '../../../src/core/workspace.js';

export interface Ran extends RunOutcome {
  /** A copy of the output that outlives the run's workspace. */
  file?: string;
}

export async function runB(dir: string, id: string, files: string[], settings: Record<string, unknown>, extra: Record<string, string[]> = {}): Promise<Ran> {
  const ws = await createWorkspace();
  try {
    const ex: Record<string, Awaited<ReturnType<typeof inputFile>>[]> = {};
    for (const [k, v] of Object.entries(extra)) ex[k] = await Promise.all(v.map((p) => inputFile(p)));
    const out = await runTool(getTool(id), { files: await Promise.all(files.map((f) => inputFile(f))), extra: ex }, settings, { workDir: ws.dir, dataDir: dir });
    let file: string | undefined;
    if (out.output) {
      const keep = mkdtempSync(path.join(dir, 'out-'));
      file = path.join(keep, out.output.name);
      cpSync(out.output.path, file);
    }
    return { ...out, file };
  } finally {
    await ws.dispose();
  }
}
