/**
 * Human progress on stderr: a bar on a TTY, nothing otherwise (or with --quiet / --json), so stdout
 * stays clean for data and pipes.
 */
import cliProgress from 'cli-progress';

export interface ProgressView {
  /** Single run: percent of the current item. Batch: items finished. */
  update(value: number, stage?: string): void;
  stop(): void;
}

export function createProgress(opts: { quiet?: boolean; total: number; label: string; unit: 'percent' | 'items' }): ProgressView {
  if (opts.quiet || !process.stderr.isTTY) return { update() {}, stop() {} };
  const bar = new cliProgress.SingleBar(
    {
      stream: process.stderr,
      format: `${opts.label} {bar} {percentage}% {stage}`,
      hideCursor: true,
      clearOnComplete: true,
      barsize: 30,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(opts.unit === 'percent' ? 100 : opts.total, 0, { stage: '' });
  return {
    update(value, stage) {
      bar.update(value, { stage: stage ?? '' });
    },
    stop() {
      bar.stop();
    },
  };
}
