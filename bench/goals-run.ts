/**
 * `npm run bench` (no family named): every row of issue 17 in one table. One `kiln serve` process
 * serves the daemon rows; the CLI rows run while it settles after start-up (they never touch it), so
 * its idle memory is read without waiting twice. `quick` (--quick): fewer rounds, fewer requests and
 * a 5-s clip, under 3 minutes on the 2-core CI machine.
 */
import { cliBatch, cliResize, cliStartup, photo, transcode } from './goal-cli.js';
import { engineRows, idleRow, latencyRow, mixedRow, throughputRow } from './goal-daemon.js';
import { type Row, row } from './goals.js';
import type { BenchOptions } from './lib.js';
import { startServe } from './serve-process.js';

/** The engines' idle time in the bench daemon: short, so their stop is part of the run. */
const ENGINE_IDLE_S = 5;
/** kiln serve lets V8 shrink its start-up heap 10 s after listening; the pages go back ~10 s later. */
const SETTLE_S = 30;

/** Row order: the table first, then the engine rows it asks for in its text. */
const ORDER = [
  'daemon resize',
  'one daemon request',
  'CLI `kiln resize',
  'CLI `kiln --version',
  'CLI batch',
  'daemon idle RSS',
  'daemon RSS',
  'engine first use: LibreOffice',
  'Office → PDF',
  'engine first use: Chromium',
  'engines stopped',
  'transcode',
];

export async function runGoals(o: BenchOptions): Promise<Row[]> {
  const quick = !!o.quick;
  const rounds = quick ? 4 : 9;
  const rows: Row[] = [];
  const big = await photo(o, 'photo-4000x3000.jpg', 4000, 3000);
  const s = await startServe({ KILN_ENGINE_IDLE_S: String(ENGINE_IDLE_S) });
  const started = Date.now();
  try {
    rows.push(await cliStartup(rounds));
    rows.push(await cliResize(o, big, rounds));
    rows.push(await cliBatch(o, 100, 2));
    const waited = (Date.now() - started) / 1000;
    const { row: idle, idleMb } = await idleRow(s, Math.max(6, SETTLE_S - waited));
    rows.push(idle);
    rows.push(await latencyRow(s, quick ? 20 : 60));
    rows.push(await throughputRow(s, big, quick ? 2 : 4, quick ? 4 : 6));
    rows.push(await mixedRow(s, idleMb, quick ? 150 : 1000));
    rows.push(...(await engineRows(o, s, quick ? 2 : 3, ENGINE_IDLE_S)));
  } catch (e) {
    rows.push(await row('daemon', () => Promise.reject(e)));
  } finally {
    await s.stop();
  }
  rows.push(await transcode(o, quick ? 5 : 30, quick ? 1 : 3));
  const rank = (r: Row) => {
    const i = ORDER.findIndex((p) => r.measure.startsWith(p));
    return i < 0 ? ORDER.length : i;
  };
  return rows.sort((a, b) => rank(a) - rank(b));
}
