/**
 * Keeps the benches from rotting: each family's smallest case, once, on tiny generated inputs. Checks
 * that every side of each comparison ran (kiln in process, the CLI, the raw engine) and gave a time.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { benchAi } from '../../bench/ai.js';
import { benchDaemon } from '../../bench/daemon.js';
import { benchDocs } from '../../bench/docs.js';
import { benchImage } from '../../bench/image.js';
import type { BenchOptions, FamilyResult } from '../../bench/lib.js';
import { benchMedia } from '../../bench/media.js';
import { benchPdf } from '../../bench/pdf.js';
import { tempDir } from '../helpers/fixtures.js';

function options(): BenchOptions & { lines: string[] } {
  const root = tempDir('kiln-bench-');
  const lines: string[] = [];
  return { n: 1, smoke: true, fixDir: `${root}/fixtures`, outDir: `${root}/out`, print: (l) => lines.push(l), lines };
}

function check(r: FamilyResult, lines: string[], keys: string[], ratio?: string): void {
  if (process.env.BENCH_SMOKE_PRINT) process.stdout.write(lines.map((l) => '# ' + l).join('\n') + '\n');
  assert.deepEqual(r.failures, [], lines.join('\n'));
  for (const k of keys) assert.ok(Number.isFinite(r.ms[k]) && r.ms[k]! > 0, `${r.family}: no time for ${k}\n${lines.join('\n')}`);
  if (ratio)
    assert.ok(
      Number.isFinite(r.ratios[ratio]) && lines.some((l) => l.includes(ratio.replace('/', ' / '))),
      `${r.family}: ratio ${ratio} not printed`,
    );
}

describe('bench smoke', { concurrency: 2 }, () => {
  // Docs first: it is the longest (two Chromium starts), the others run beside it.
  test('docs: Markdown → PDF by hand (pandoc + chromium) and runTool', async () => {
    const o = options();
    check(await benchDocs(o), o.lines, ['byhand-md', 'kiln-md'], 'kiln-md/byhand-md');
  });

  test('image: JPEG → WebP through sharp, runTool and the CLI', async () => {
    const o = options();
    check(await benchImage(o), o.lines, ['sharp-webp', 'kiln-webp', 'cli-webp'], 'kiln-webp/sharp-webp');
  });

  test('pdf: extract pages through qpdf and runTool', async () => {
    const o = options();
    check(await benchPdf(o), o.lines, ['qpdf-extract', 'kiln-extract'], 'kiln-extract/qpdf-extract');
  });

  test('media: trim by stream copy through ffmpeg and runTool', async () => {
    const o = options();
    check(await benchMedia(o), o.lines, ['ffmpeg-trim', 'kiln-trim'], 'kiln-trim/ffmpeg-trim');
  });

  test('daemon: small resize and health under autocannon (a few requests)', async () => {
    const o = options();
    check(await benchDaemon(o), o.lines, ['daemon-small', 'daemon-health']);
  });

  test('ai: background removal cold and warm in the model host (real bundle from the shared cache)', async () => {
    const o = options();
    process.env.KILN_DATA_DIR = `${o.outDir}/data`;
    check(await benchAi(o), o.lines, ['matte-fp16-cold', 'matte-fp16-warm'], 'matte-fp16-cold/matte-fp16-warm');
  });

  test('goals table: a row passes, misses within 20 % or fails, and a throwing row is an error', async () => {
    const { row, status, table } = await import('../../bench/goals.js');
    const { cliStartup } = await import('../../bench/goal-cli.js');
    const le = { on: 'ratio', op: '<=', target: 1.3 } as const;
    const ge = { on: 'ratio', op: '>=', target: 4 } as const;
    assert.equal(status({ measure: 'a', kiln: '', reference: '', value: 1.3, goal: le }), 'ok');
    assert.equal(status({ measure: 'a', kiln: '', reference: '', value: 1.5, goal: le }), 'miss');
    assert.equal(status({ measure: 'a', kiln: '', reference: '', value: 1.6, goal: le }), 'FAIL');
    assert.equal(status({ measure: 'a', kiln: '', reference: '', value: 3.3, goal: ge }), 'miss');
    assert.equal(status({ measure: 'a', kiln: '', reference: '', value: 3.1, goal: ge }), 'FAIL');
    const broken = await row('broken', () => Promise.reject(new Error('no engine')));
    assert.equal(status(broken), 'ERROR');
    // One real row, one round: kiln --version against node.
    const startup = await cliStartup(1);
    assert.equal(startup.error, undefined);
    assert.ok(startup.value! > 0 && startup.ratio! > 0);
    const text = table([startup, broken]);
    assert.match(text, /\| CLI `kiln --version` +\| [\d.]+ ms +\| `node -e 0` [\d.]+ ms/);
    assert.match(text, /\| broken +\| error: no engine/);
  });

  test('interleaved rounds start one side further on each time and keep each side its own samples', async () => {
    const { interleave } = await import('../../bench/goals.js');
    const calls: string[] = [];
    const side = (name: string, value: number) => () => {
      calls.push(name);
      return value;
    };
    const samples = await interleave(3, [side('a', 1), side('b', 2), side('c', 3)], { warmup: 1 });
    // The warm-up round (untimed) starts with a, the timed ones with b, c, a.
    assert.equal(calls.join(' '), 'a b c b c a c a b a b c');
    assert.deepEqual(samples, [
      [1, 1, 1],
      [2, 2, 2],
      [3, 3, 3],
    ]);
  });

  test('a failing engine is one FAILED line, not an exception', async () => {
    const { Bench, sh } = await import('../../bench/lib.js');
    const o = options();
    const b = new Bench(o, 'x');
    assert.equal(await b.time('bad', 'missing engine', () => sh('kiln-no-such-engine', [])), undefined);
    assert.equal(b.result.failures.length, 1);
    assert.match(o.lines.join('\n'), /missing engine\s+FAILED\s+kiln-no-such-engine: .*ENOENT/);
    // Interleaved sides: the failing one drops out, the other still gets its time.
    await b.compare([
      ['ok', 'true', () => sh('true', [])],
      ['bad2', 'false', () => sh('false', [])],
    ]);
    assert.ok(b.result.ms.ok! > 0);
    assert.equal(b.result.ms.bad2, undefined);
    assert.match(o.lines.join('\n'), /false\s+FAILED\s+false exited 1/);
  });
});
