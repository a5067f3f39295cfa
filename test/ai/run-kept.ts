/** runTool as the AI tests use it: one input file, a fresh workspace, the output kept after the workspace goes. */
import { cpSync, mkdtempSync } from 'node:fs';
import path from 'node:path';
import { createWorkspace } from '../../src/core/workspace.js';
import { getTool } from '../../src/tools/index.js';
import { inputFile, type RunOutcome, runTool } from '../../src/tools/run-tool.js';

/** Runs tool `id` on `file` (and `extra` second files by field) with `dataDir`; the output is copied into a new dir under `keepIn`. */
export async function runKept(
  keepIn: string,
  dataDir: string,
  id: string,
  file: string,
  settings: Record<string, unknown>,
  extra: Record<string, string> = {},
): Promise<RunOutcome & { file?: string }> {
  const ws = await createWorkspace();
  try {
    const ex = Object.fromEntries(await Promise.all(Object.entries(extra).map(async ([k, v]) => [k, [await inputFile(v)]])));
    const out = await runTool(getTool(id), { files: [await inputFile(file)], extra: ex }, settings, { workDir: ws.dir, dataDir });
    let kept: string | undefined;
    if (out.output) {
      kept = path.join(mkdtempSync(path.join(keepIn, 'out-')), out.output.name);
      cpSync(out.output.path, kept);
    }
    return { ...out, file: kept };
  } finally {
    await ws.dispose();
  }
}
