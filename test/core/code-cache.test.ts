/**
 * requireCached (src/core/code-cache.ts): a CommonJS file run with V8's code cache kept between
 * processes — compiled and cached by the first run, taken from the cache by the next, compiled again
 * when the file or the cache changes, never read from a directory another account could write to,
 * and off with NODE_DISABLE_COMPILE_CACHE=1. Each case is a fresh node process, as each CLI run is.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, it } from 'node:test';
import { tempDir } from '../helpers/fixtures.js';

const CODE_CACHE = pathToFileURL(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/core/code-cache.js')).href;

describe('requireCached', () => {
  const dir = tempDir('kiln-code-cache-');
  const lib = path.join(dir, 'lib.cjs');
  // Enough code that compiling it is real work, and each way a CommonJS file hands back its exports.
  const body = (n: number) =>
    [
      "const path = require('node:path');",
      `exports.answer = ${n};`,
      'exports.where = path.basename(__filename) + " in " + path.basename(__dirname);',
      ...Array.from({ length: 300 }, (_, i) => `exports.f${i} = function (x) { return x * ${i} + ${n}; };`),
      'module.exports.sum = function () { let s = 0; for (let i = 0; i < 300; i++) s += exports["f" + i](1); return s; };',
    ].join('\n');

  /** Loads lib.cjs in a new node process; what it exported and how its code was had. */
  function load(env: NodeJS.ProcessEnv): { answer: number; where: string; sum: number; outcome: string } {
    const script = [
      `import { requireCached, codeCacheOutcome } from ${JSON.stringify(CODE_CACHE)};`,
      `const m = requireCached(${JSON.stringify(lib)});`,
      `if (requireCached(${JSON.stringify(lib)}) !== m) throw new Error('loaded twice');`,
      `console.log(JSON.stringify({ answer: m.answer, where: m.where, sum: m.sum(), outcome: codeCacheOutcome(${JSON.stringify(lib)}) }));`,
    ].join('\n');
    const env2 = { ...process.env, ...env };
    for (const [k, v] of Object.entries(env)) if (v === undefined) delete env2[k];
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { env: env2, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout) as { answer: number; where: string; sum: number; outcome: string };
  }
  const cacheFiles = (cache: string) => readdirSync(path.join(cache, 'kiln')).filter((f) => f.endsWith('.v8'));

  it('compiles and caches on the first run, takes the cache on the next, and gives the same exports', () => {
    writeFileSync(lib, body(7));
    const cache = path.join(dir, 'cache-a');
    const env = { NODE_COMPILE_CACHE: cache, NODE_DISABLE_COMPILE_CACHE: undefined };
    const first = load(env);
    assert.equal(first.outcome, 'compiled');
    assert.deepEqual({ answer: first.answer, where: first.where }, { answer: 7, where: `lib.cjs in ${path.basename(dir)}` });
    assert.equal(cacheFiles(cache).length, 1, 'the first run left no cache file');
    const second = load(env);
    assert.equal(second.outcome, 'cached');
    assert.deepEqual(second, { ...first, outcome: 'cached' });
    // Private: the directory and the file are this user's alone.
    assert.equal(statSync(path.join(cache, 'kiln')).mode & 0o777, 0o700);
    assert.equal(statSync(path.join(cache, 'kiln', cacheFiles(cache)[0]!)).mode & 0o777, 0o600);
  });

  it('compiles again when the file changes or V8 refuses the cache, and caches the new code', () => {
    const cache = path.join(dir, 'cache-b');
    const env = { NODE_COMPILE_CACHE: cache, NODE_DISABLE_COMPILE_CACHE: undefined };
    writeFileSync(lib, body(1));
    utimesSync(lib, new Date(1_000_000), new Date(1_000_000));
    assert.equal(load(env).outcome, 'compiled');
    assert.equal(load(env).outcome, 'cached');
    // A new build of the file: its own cache, and the new code runs (not the old from the cache).
    writeFileSync(lib, body(2));
    utimesSync(lib, new Date(2_000_000), new Date(2_000_000));
    const rebuilt = load(env);
    assert.deepEqual([rebuilt.outcome, rebuilt.answer], ['compiled', 2]);
    assert.equal(load(env).outcome, 'cached');
    // A damaged cache file: V8 refuses it, the code compiles, and the file is written anew.
    for (const f of cacheFiles(cache)) writeFileSync(path.join(cache, 'kiln', f), 'not a code cache');
    const damaged = load(env);
    assert.deepEqual([damaged.outcome, damaged.answer], ['compiled', 2]);
    assert.equal(load(env).outcome, 'cached');
  });

  it('keeps one cache per set of node options, so runs with other V8 flags do not undo each other', () => {
    writeFileSync(lib, body(4));
    const cache = path.join(dir, 'cache-flags');
    const plain = { NODE_COMPILE_CACHE: cache, NODE_DISABLE_COMPILE_CACHE: undefined, NODE_OPTIONS: undefined };
    const daemon = { ...plain, NODE_OPTIONS: '--max-semi-space-size=8' };
    assert.equal(load(plain).outcome, 'compiled');
    assert.equal(load(daemon).outcome, 'compiled');
    assert.equal(load(plain).outcome, 'cached');
    assert.equal(load(daemon).outcome, 'cached');
    assert.equal(cacheFiles(cache).length, 2);
  });

  it('reads no cache from a directory or file others can write to, and none with NODE_DISABLE_COMPILE_CACHE=1', () => {
    writeFileSync(lib, body(3));
    const cache = path.join(dir, 'cache-c');
    const env = { NODE_COMPILE_CACHE: cache, NODE_DISABLE_COMPILE_CACHE: undefined };
    assert.equal(load(env).outcome, 'compiled');
    assert.equal(load(env).outcome, 'cached');
    chmodSync(path.join(cache, 'kiln'), 0o777);
    assert.equal(load(env).outcome, 'uncached', 'a cache was taken from a directory anyone can write to');
    chmodSync(path.join(cache, 'kiln'), 0o700);
    assert.equal(load(env).outcome, 'cached');
    // A cache file others may write to is not read either; the run writes a private one in its place.
    const file = path.join(cache, 'kiln', cacheFiles(cache)[0]!);
    chmodSync(file, 0o666);
    assert.equal(load(env).outcome, 'compiled', 'a cache file anyone can write to was read');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(load(env).outcome, 'cached');
    const off = path.join(dir, 'cache-off');
    mkdirSync(off);
    const r = load({ NODE_COMPILE_CACHE: off, NODE_DISABLE_COMPILE_CACHE: '1' });
    assert.deepEqual([r.outcome, r.answer], ['uncached', 3]);
    assert.deepEqual(readdirSync(off), [], 'the cache was off, yet something was written');
  });

  it('passes on what the file throws, and loads it again on the next call', () => {
    const bad = path.join(dir, 'throws.cjs');
    writeFileSync(bad, "throw new Error('broken on purpose');");
    const script = [
      `import { requireCached } from ${JSON.stringify(CODE_CACHE)};`,
      'let n = 0;',
      `for (let i = 0; i < 2; i++) { try { requireCached(${JSON.stringify(bad)}); } catch (e) { if (/broken on purpose/.test(e.message)) n++; } }`,
      'console.log(n);',
    ].join('\n');
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      env: { ...process.env, NODE_COMPILE_CACHE: path.join(dir, 'cache-d') },
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), '2');
  });
});
