/**
 * What a plain run (no --json) prints on stderr once its results are in, for a tool run and a pipeline
 * run alike: each failure, each warning (not with --quiet), and at a terminal where each output went.
 */
import type { ItemResult } from './local-runner.js';

export function reportResults(results: ItemResult[], o: { quiet?: boolean }): void {
  for (const r of results) {
    const from = r.input ? `${r.input}: ` : '';
    if (!r.ok) process.stderr.write(`kiln: ${from}${r.error!.message}\n`);
    else if (!o.quiet) {
      for (const w of warningsOf(r)) process.stderr.write(`kiln: ${from}warning: ${w}\n`);
      if (r.output && r.output !== '-' && process.stderr.isTTY) process.stderr.write(`${r.input ?? ''} → ${r.output}\n`);
    }
  }
}

/**
 * What a run says it left out or assumed (data.warnings: tracks a container cannot hold, a language
 * assumed), and a library item its output could not be saved to: --json carries them; plain runs print
 * them on stderr, even in a log, as ffmpeg does.
 */
function warningsOf(r: ItemResult): string[] {
  const w = r.data?.warnings;
  const saved = r.afterSuccessError ? [`the output was not saved to the library item: ${r.afterSuccessError.message}`] : [];
  return [...(Array.isArray(w) ? w.filter((x): x is string => typeof x === 'string') : []), ...saved];
}
