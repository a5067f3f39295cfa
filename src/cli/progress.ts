/**
 * Human progress on stderr: a bar on a TTY, nothing otherwise (or with --quiet / --json), so stdout
 * stays clean for data and pipes.
 */
import type { SingleBar } from 'cli-progress';

export interface ProgressView {
  /** Single run: percent of the current item. Batch: items finished. */
  update(value: number, stage?: string): void;
  stop(): void;
}

export function createProgress(opts: { quiet?: boolean; total: number; label: string; unit: 'percent' | 'items' }): ProgressView {
  if (opts.quiet || !process.stderr.isTTY) return { update() {}, stop() {} };
  // cli-progress loads only when a bar is drawn (scripts and pipes never pay for it). Until it has
  // loaded, the latest value waits and is drawn first; a stop before then draws nothing.
  let bar: SingleBar | undefined;
  let latest: [number, string] = [0, ''];
  let stopped = false;
  void import('cli-progress').then(({ default: cliProgress }) => {
    if (stopped) return;
    bar = new cliProgress.SingleBar(
      {
        stream: process.stderr,
        format: `${opts.label} {bar} {percentage}% {stage}`,
        hideCursor: true,
        clearOnComplete: true,
        barsize: 30,
      },
      cliProgress.Presets.shades_classic,
    );
    bar.start(opts.unit === 'percent' ? 100 : opts.total, latest[0], { stage: latest[1] });
  });
  return {
    update(value, stage) {
      latest = [value, stage ?? ''];
      bar?.update(value, { stage: stage ?? '' });
    },
    stop() {
      stopped = true;
      bar?.stop();
    },
  };
}
