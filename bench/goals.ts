/**
 * The goals of issue 17 as one table: each row is kiln against a reference measured in the same run,
 * sides interleaved (one sample of each side per round, so load from other processes on a shared
 * machine hits both alike), medians of the rounds, and the goal. A row misses its goal when the
 * checked number is on the wrong side of it, and fails when it misses by more than 20 % (the exit code).
 */
import os from 'node:os';

export interface Goal {
  /** Which number the goal is on: the ratio kiln / reference (or reference / kiln for speed-ups), or kiln's own value. */
  on: 'ratio' | 'kiln';
  op: '<=' | '>=';
  target: number;
  /** Unit of a goal on kiln's own value (s, ms, MB). */
  unit?: string;
}

export interface Row {
  measure: string;
  /** kiln's number and the reference's, formatted with their units. */
  kiln: string;
  reference: string;
  ratio?: number;
  /** The number the goal is checked on. */
  value?: number;
  goal?: Goal;
  /** Set when the measurement itself failed. */
  error?: string;
}

export type Status = 'ok' | 'miss' | 'FAIL' | 'ERROR' | '';

/** ok: goal met; miss: missed by at most 20 %; FAIL: missed by more (or the row could not be measured). */
export function status(row: Row): Status {
  if (row.error) return 'ERROR';
  const g = row.goal;
  if (!g || row.value === undefined || !Number.isFinite(row.value)) return '';
  const v = row.value;
  if (g.op === '<=') return v <= g.target ? 'ok' : v <= g.target * 1.2 ? 'miss' : 'FAIL';
  return v >= g.target ? 'ok' : v >= g.target * 0.8 ? 'miss' : 'FAIL';
}

export function goalText(g: Goal | undefined): string {
  if (!g) return '—';
  const t = g.on === 'ratio' ? `${g.target}×` : `${g.target}${g.unit ? ` ${g.unit}` : ''}`;
  return `${g.op === '<=' ? '≤' : '≥'} ${t}`;
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * Runs every side once per round, `rounds` times (after one untimed warm-up round, or `warmup` of
 * them, or none), and returns each side's samples in ms. A side may return its own number (a rate, a
 * size) instead of being timed. Each round starts one side further on, so going first (after another
 * row, while the bench daemon settles) falls on every side in turn, not always on the first.
 */
export async function interleave(
  rounds: number,
  sides: (() => Promise<number | void> | number | void)[],
  opts: { warmup?: boolean | number } = {},
): Promise<number[][]> {
  const samples = sides.map(() => [] as number[]);
  const warmup = opts.warmup === false ? 0 : opts.warmup === true || opts.warmup === undefined ? 1 : opts.warmup;
  for (let r = -warmup; r < rounds; r++) {
    for (let k = 0; k < sides.length; k++) {
      const i = (k + r + warmup) % sides.length;
      const t0 = performance.now();
      const got = await sides[i]!();
      const ms = performance.now() - t0;
      if (r >= 0) samples[i]!.push(typeof got === 'number' ? got : ms);
    }
  }
  return samples;
}

export const ms = (x: number): string =>
  x >= 10_000 ? `${(x / 1000).toFixed(1)} s` : x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(x < 10 ? 1 : 0)} ms`;

/** The machine line printed above the table (and kept with it in the README). */
export function machine(): string {
  const cpu = os.cpus()[0]?.model.replace(/\s+/g, ' ').trim() ?? 'unknown CPU';
  const load = os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');
  return `${os.cpus().length} × ${cpu}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.type()} ${os.release()}, node ${process.version}, load ${load}`;
}

/** A Markdown table (it reads in a terminal and goes into the README as is). */
export function table(rows: Row[]): string {
  const head = ['measure', 'kiln', 'reference, same run', 'ratio', 'goal', ''];
  const body = rows.map((r) => [
    r.measure,
    r.error ? `error: ${r.error.slice(0, 80)}` : r.kiln,
    r.reference,
    r.ratio === undefined ? '—' : `${r.ratio.toFixed(2)}×`,
    goalText(r.goal),
    status(r),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...body.map(line)].join('\n');
}

/** Runs a row's measurement; a throw becomes the row's error instead of ending the bench. */
export async function row(measure: string, fn: () => Promise<Omit<Row, 'measure'>>): Promise<Row> {
  try {
    return { measure, ...(await fn()) };
  } catch (e) {
    return { measure, kiln: '', reference: '', error: ((e as Error).message ?? String(e)).split('\n')[0] };
  }
}
