/**
 * The daemon's old-generation growth (daemon/system/heap-growth.ts): set at run time, V8 takes it when
 * it next sets the limit at which marking starts (checked in a node process of its own, reading V8's
 * trace), and an operator's own flag on node's command line is left alone.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, it } from 'node:test';
import { HEAP_GROWING_PERCENT, steadyHeapGrowth } from '../../daemon/system/heap-growth.js';

const HEAP_GROWTH = pathToFileURL(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../daemon/system/heap-growth.js')).href;

/**
 * For each incremental marking V8 starts after a full collection: the heap that collection kept and the
 * limit V8 then set (its trace lines), in a process that keeps ~40 MB and churns, with the young
 * generation bin/kiln gives the daemon.
 */
function limitsAfterCollections(): { live: number; limit: number }[] {
  const script = `
    import { PerformanceObserver, constants } from 'node:perf_hooks';
    import { steadyHeapGrowth } from ${JSON.stringify(HEAP_GROWTH)};
    steadyHeapGrowth([]);
    let full = 0;
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) if (e.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) full++;
    }).observe({ entryTypes: ['gc'] });
    const kept = [];
    for (let i = 0; i < 24; i++) kept.push(Array.from({ length: 20_000 }, (_, j) => ({ i, j, s: 'x' + j })));
    // Garbage that outlives a young collection or two, as request state does, so the old generation
    // grows: until three full collections have run (however slow the machine), or 30 s.
    const t0 = Date.now();
    for (let round = 0; full < 3 && Date.now() - t0 < 30_000; round++) {
      const batch = Array.from({ length: 5_000 }, (_, j) => ({ round, j, s: 'y' + j }));
      await new Promise((r) => setTimeout(r, 2));
      kept[round % 24][0] = batch;
    }
    console.log('kept', kept.length);
  `;
  const out = execFileSync(
    process.execPath,
    ['--max-semi-space-size=8', '--trace-gc', '--trace-incremental-marking', '--input-type=module', '-e', script],
    {
      encoding: 'utf8',
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  const found: { live: number; limit: number }[] = [];
  let live: number | undefined;
  for (const line of out.split('\n')) {
    const mc = /Mark-Compact [\d.]+ \([\d.]+\) -> ([\d.]+) \(/.exec(line);
    if (mc) live = Number(mc[1]);
    // "(size/limit/slack) v8: 29MB / 45MB / 16MB"; node 24 adds a field: "(size/waste/limit/slack)".
    const start = /Start \([^)]*\): \(([a-z/]+)\) v8: ([^g]+)/.exec(line);
    // The first marking runs against V8's start-up limit, set before any collection.
    if (start && live !== undefined) {
      const limit = start[2]!.match(/\d+/g)?.[start[1]!.split('/').indexOf('limit')];
      if (limit) found.push({ live, limit: Number(limit) });
    }
  }
  return found;
}

describe('heap growth', () => {
  it('sets the limit where marking starts at twice the heap the last collection kept', () => {
    const starts = limitsAfterCollections();
    assert.ok(starts.length > 0, 'no marking started after a full collection');
    // V8 adds room for the young generation on top (8 to 16 MB here); left to itself it set 4× here.
    const factor = 1 + HEAP_GROWING_PERCENT / 100;
    for (const { live, limit } of starts)
      assert.ok(limit >= live * factor * 0.95 && limit <= live * factor + 24, `limit ${limit} MB over ${live} MB kept`);
  });

  it("leaves an operator's own flag alone", () => {
    assert.equal(steadyHeapGrowth(['--heap-growing-percent=50']), false);
    assert.equal(steadyHeapGrowth(['--heap_growing_percent=50']), false);
  });
});
