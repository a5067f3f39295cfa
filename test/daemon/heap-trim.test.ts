/**
 * Giving the C heap's free pages back (daemon/system/heap-trim.ts): a real malloc_trim on a heap with
 * holes shrinks the resident set, and the quiet timer trims only once no job has run for a while.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, it } from 'node:test';
import { QuietTrim } from '../../daemon/system/heap-trim.js';

const HEAP_TRIM = pathToFileURL(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../daemon/system/heap-trim.js')).href;

describe('heap trim', () => {
  it('returns the free holes of a fragmented heap to the system', { skip: process.platform !== 'linux' }, () => {
    // 3000 buffers of 32 KB, each its own malloc'd block (under glibc's mmap threshold), every other
    // one freed: ~48 MB of holes between live blocks, which free() alone cannot give back.
    const script = `
      import { trimNativeHeap } from ${JSON.stringify(HEAP_TRIM)};
      import { readFileSync } from 'node:fs';
      import { setFlagsFromString } from 'node:v8';
      import { runInNewContext } from 'node:vm';
      setFlagsFromString('--expose-gc');
      const gc = runInNewContext('gc');
      const rss = () => Number(/^VmRSS:\\s+(\\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'))[1]) / 1024;
      let blocks = Array.from({ length: 3000 }, () => Buffer.allocUnsafeSlow(32 * 1024).fill(1));
      const kept = blocks.filter((_, i) => i % 2 === 0);
      blocks = null;
      gc(); gc();
      const before = rss();
      const released = trimNativeHeap();
      const after = rss();
      console.log(JSON.stringify({ before, after, released, kept: kept.length }));
    `;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      env: { ...process.env, MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '131072', MALLOC_TRIM_THRESHOLD_: '131072' },
    });
    const r = JSON.parse(out.trim().split('\n').pop()!) as { before: number; after: number; released: boolean };
    assert.equal(r.released, true, out);
    assert.ok(r.before - r.after > 20, `RSS ${r.before.toFixed(0)} MB → ${r.after.toFixed(0)} MB: less than 20 MB given back`);
  });

  it('trims once, after a quiet period without running jobs', async () => {
    let busy = 1;
    let trims = 0;
    const q = new QuietTrim(
      40,
      () => busy,
      () => trims++,
    );
    q.poke();
    await new Promise((r) => setTimeout(r, 70));
    assert.equal(trims, 0, 'not while a job runs');
    busy = 0;
    q.poke();
    q.poke();
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(trims, 0, 'not before the quiet period is over');
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(trims, 1, 'once after it');
    q.close();
  });

  it('never trims with a quiet time of 0', async () => {
    let trims = 0;
    const q = new QuietTrim(
      0,
      () => 0,
      () => trims++,
    );
    q.poke();
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(trims, 0);
  });
});
