/** What the document tool tests share: a run that keeps its output, and reading a PDF back with poppler. */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createWorkspace } from '../../../src/core/workspace.js';
import { getTool } from '../../../src/tools/index.js';
import { inputFile, runTool } from '../../../src/tools/run-tool.js';

/** Runs `tool` on `file` with `dir` as data dir; the output is copied to dir/`keep` (default: its own name). */
export async function runDoc(
  dir: string,
  tool: string,
  file: string,
  settings: Record<string, unknown> = {},
  keep?: string,
): Promise<string> {
  const ws = await createWorkspace();
  try {
    const out = await runTool(getTool(tool), { files: [await inputFile(file)], extra: {} }, settings, { workDir: ws.dir, dataDir: dir });
    const dest = path.join(dir, keep ?? out.output!.name);
    writeFileSync(dest, readFileSync(out.output!.path));
    return dest;
  } finally {
    await ws.dispose();
  }
}

export const pdfText = (p: string) => execFileSync('pdftotext', ['-layout', p, '-'], { encoding: 'utf8' });
export const pdfPages = (p: string) => Number(/Pages:\s+(\d+)/.exec(execFileSync('pdfinfo', [p], { encoding: 'utf8' }))![1]);
