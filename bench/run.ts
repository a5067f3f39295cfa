/**
 * `npm run bench [-- --quick]`: the goals of issue 17 in one table (bench/goals-run.ts): kiln against
 * its reference, interleaved, the ratio and the goal; the exit code is 1 when a row misses its goal by
 * more than 20 % or could not be measured.
 * `npm run bench -- image pdf media docs daemon ai ocr`: the detailed families instead, kiln against the
 * raw engines and peer tools, ms per operation and ratios (see bench/README.md); the exit code is 1 if
 * any case failed. `--quick` (or BENCH_QUICK=1) runs fewer iterations in both modes.
 */
import { mkdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchAi } from './ai.js';
import { benchDaemon } from './daemon.js';
import { benchDocs } from './docs.js';
import { benchImage } from './image.js';
import { ROOT, type BenchOptions, type FamilyResult } from './lib.js';
import { benchMedia } from './media.js';
import { benchOcr } from './ocr.js';
import { benchPdf } from './pdf.js';
import { machine, status, table } from './goals.js';
import { runGoals } from './goals-run.js';

const FAMILIES = ['image', 'pdf', 'media', 'docs', 'daemon', 'ai', 'ocr'] as const;
type Family = (typeof FAMILIES)[number];

async function main(): Promise<void> {
  const args = process.argv.slice(2).filter((a) => a !== '--');
  const asked = args.filter((a) => a !== '--quick');
  const unknown = asked.filter((a) => !(FAMILIES as readonly string[]).includes(a));
  if (unknown.length) {
    process.stderr.write(
      `unknown bench famil${unknown.length > 1 ? 'ies' : 'y'}: ${unknown.join(', ')} (choose from ${FAMILIES.join(', ')})\n`,
    );
    process.exit(2);
  }
  const families: Family[] = FAMILIES.filter((f) => asked.includes(f));
  const quick = process.env.BENCH_QUICK === '1' || args.includes('--quick');
  const outDir = path.join(os.tmpdir(), `kiln-bench-${process.pid}`);
  mkdirSync(outDir, { recursive: true });
  // Removed on every way out: both modes end in process.exit(), which skips a pending `finally` (the
  // goals mode left 39 MB of outputs and LibreOffice profiles in the temp dir after each run).
  process.once('exit', () => rmSync(outDir, { recursive: true, force: true }));
  // Ctrl-C or a kill would end the process without 'exit' (the terminal's SIGINT reaches the bench's
  // children, the kiln serve among them, as well).
  for (const [sig, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)
    process.once(sig, () => process.exit(code));
  // The CLI runs under test get a private data dir, not the user's.
  process.env.KILN_DATA_DIR ??= path.join(outDir, 'data');
  const o: BenchOptions = {
    n: quick ? 3 : 10,
    smoke: false,
    quick,
    fixDir: path.join(ROOT, 'bench', 'fixtures'),
    outDir,
    print: (l) => process.stdout.write(l + '\n'),
  };
  if (!families.length) return goals(o);
  const load = os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');
  o.print(
    `kiln bench: ${families.join(', ')} — ${o.n} runs per case${quick ? ' (BENCH_QUICK)' : ''}, ${os.cpus().length} cores, load ${load}, node ${process.version}`,
  );

  const results: FamilyResult[] = [];
  const started = Date.now();
  for (const f of families) {
    o.print(`\n=== ${f} ===`);
    const t0 = Date.now();
    try {
      if (f === 'image') results.push(await benchImage(o));
      if (f === 'pdf') results.push(await benchPdf(o));
      if (f === 'media') results.push(await benchMedia(o));
      if (f === 'docs') results.push(await benchDocs(o));
      if (f === 'ai') results.push(await benchAi(o));
      if (f === 'ocr') results.push(await benchOcr(o));
      if (f === 'daemon') results.push(await benchDaemon(o, results.find((r) => r.family === 'image')?.ms['kiln-resize']));
    } catch (e) {
      // Fixture generation or set-up broke: the other families still run.
      results.push({ family: f, ms: {}, ratios: {}, failures: [`set-up: ${(e as Error).message}`] });
      o.print(`  ${f} FAILED before its cases ran: ${(e as Error).message.split('\n')[0]}`);
    }
    o.print(`  (${f}: ${((Date.now() - t0) / 1000).toFixed(0)} s)`);
  }
  const failures = results.flatMap((r) => r.failures.map((x) => `${r.family} ${x}`));
  o.print(
    `\ndone in ${((Date.now() - started) / 1000).toFixed(0)} s${failures.length ? `; ${failures.length} failed case(s):` : ', no failures'}`,
  );
  for (const f of failures) o.print(`  ${f}`);
  process.exit(failures.length ? 1 : 0);
}

async function goals(o: BenchOptions): Promise<void> {
  const started = Date.now();
  o.print(`kiln bench${o.quick ? ' --quick' : ''}: the goals of issue 17 (medians of interleaved rounds)`);
  o.print(`machine: ${machine()}`);
  const rows = await runGoals(o);
  o.print('');
  o.print(table(rows));
  o.print('');
  const bad = rows.filter((r) => ['FAIL', 'ERROR'].includes(status(r)));
  o.print(
    `load at the end ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}; ${((Date.now() - started) / 1000).toFixed(0)} s`,
  );
  o.print(
    bad.length
      ? `${bad.length} row(s) miss their goal by more than 20 % or failed: ${bad.map((r) => r.measure).join('; ')}`
      : 'every goal met or within 20 %',
  );
  process.exit(bad.length ? 1 : 0);
}

main().catch((e) => {
  process.stderr.write(`bench failed: ${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
