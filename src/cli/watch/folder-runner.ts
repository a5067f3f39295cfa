import path from 'node:path';
import { toKilnError } from '../../core/errors.js';
import type { Tool } from '../../core/tool.js';
import { type DriveOptions, driveFolder } from '../../watch/driver.js';
import { runLocal } from '../local-runner.js';
import { makeDir } from '../../core/make-dir.js';

/** The folder's own options are the driver's; the CLI adds what runs and how it reports. */
export interface WatchOptions
  extends Pick<DriveOptions, 'inDir' | 'recursive' | 'keep' | 'initial' | 'jobs' | 'stableMs' | 'intervalMs' | 'signal'> {
  outDir: string;
  tool: Tool;
  /** Shown in logs: the tool, preset or pipeline name. */
  name: string;
  settings: Record<string, unknown>;
  /** Keep a multi-output tool's ZIP whole (`--zip` after --tool) instead of writing its files. */
  zip?: boolean;
  json: boolean;
  quiet: boolean;
}

export async function watchFolder(o: WatchOptions): Promise<{ processed: number; failed: number }> {
  const inDir = path.resolve(o.inDir);
  const outDir = path.resolve(o.outDir);
  await makeDir(outDir);
  // A file of the same name arriving later (a.png today, a.png tomorrow) must not replace the first
  // one's output: each output takes a free name (a-2.png), as the originals in .done/ do.
  const claimed = new Set<string>();
  const log = (line: string) => {
    if (!o.quiet) process.stderr.write(`kiln watch: ${line}\n`);
  };
  const r = await driveFolder({
    ...o,
    inDir,
    relativeTo: process.cwd(),
    async run(file, rel) {
      try {
        const [r] = await runLocal({
          tool: o.tool,
          name: o.name,
          inputs: [file],
          extra: {},
          settings: o.settings,
          zip: o.zip,
          // Mirrors sub-folders (--recursive) so equal names in two folders do not meet.
          output: path.join(outDir, path.dirname(rel)) + path.sep,
          claimed,
          quiet: true,
          silent: true,
          concurrency: 1,
          signal: o.signal,
        });
        if (!r) return { ok: false };
        if (!r.ok) return { ok: false, error: r.error };
        // Written, its names are kept by the files themselves (a destination that exists is never
        // taken): one the driver removes again (its input changed during the run) is free again.
        for (const f of r.outputs ?? (r.output ? [r.output] : [])) claimed.delete(f);
        return { ok: true, output: r.output, ...(r.outputs ? { outputs: r.outputs } : {}), ...(r.data ? { data: r.data } : {}) };
      } catch (e) {
        return { ok: false, error: toKilnError(e).toJSON().error };
      }
    },
    onLine(line) {
      if (line.ok) log(`${line.input} → ${line.output ?? 'done'} (${line.ms} ms)`);
      else log(`${line.input} failed: ${line.error?.message} (moved to ${line.movedTo})`);
      if (o.json) process.stdout.write(JSON.stringify(line) + '\n');
    },
    onError: log,
    onStarted: () => log(`${inDir} → ${outDir} with ${o.name} (${o.jobs} at a time; Ctrl-C stops)`),
  });
  log(`stopped (${r.processed} processed, ${r.failed} failed)`);
  return r;
}
