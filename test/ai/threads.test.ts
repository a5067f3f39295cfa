/**
 * The threads a model runs with (src/ai/threads.ts): every core, spinning in the CLI and not in the
 * daemon (told by buildServer), KILN_AI_THREADS over both, never fewer than one; and what ortSession() asks of the real onnxruntime (installed from the shared verified
 * cache): the thread count opens that many intra-op threads, and the session options' `extra` object
 * is read by the binding (a value of the wrong type is refused), so the spinning switch is not dropped.
 */
import assert from 'node:assert/strict';
import { readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { installRuntime } from '../../src/ai/install/installer.js';
import { fetchTarball } from '../../src/ai/install/npm.js';
import { runtimeLink } from '../../src/ai/paths.js';
import { ortSession, ortSessionOptions } from '../../src/ai/runtimes/ort-session.js';
import onnxruntime from '../../src/ai/runtimes/onnxruntime.js';
import type { OrtApi } from '../../src/ai/runtimes/ort-types.js';
import { aiThreads, sharedWith, shareCores } from '../../src/ai/threads.js';
import { tempDir } from '../helpers/fixtures.js';
import { startServer } from '../helpers/server.js';
import { sharedCacheDir } from './install-helper.js';
import { onnxModel } from './onnx-builder.js';

describe('AI threads: the rule', () => {
  it('the CLI (no share): every core, spinning', () => {
    assert.deepEqual(aiThreads({}, undefined, 8), { threads: 8, spin: true });
    assert.deepEqual(aiThreads({}, undefined, 1), { threads: 1, spin: true });
  });

  it('the daemon: every core too (one inference at a time), not spinning', () => {
    assert.deepEqual(aiThreads({}, 2, 8), { threads: 8, spin: false });
    assert.deepEqual(aiThreads({}, 3, 2), { threads: 2, spin: false });
    assert.deepEqual(aiThreads({}, 1, 1), { threads: 1, spin: false });
  });

  it('KILN_AI_THREADS wins in both; a value that is not a whole number above 0 is ignored', () => {
    assert.deepEqual(aiThreads({ KILN_AI_THREADS: '3' }, 2, 8), { threads: 3, spin: false });
    assert.deepEqual(aiThreads({ KILN_AI_THREADS: '3' }, undefined, 8), { threads: 3, spin: true });
    assert.deepEqual(aiThreads({ KILN_AI_THREADS: '16' }, 4, 2), { threads: 16, spin: false });
    for (const bad of ['0', '-2', '1.5', 'four', ''])
      assert.deepEqual(aiThreads({ KILN_AI_THREADS: bad }, 2, 8), { threads: 8, spin: false }, `KILN_AI_THREADS=${bad}`);
  });

  it('shareCores sets the share the defaults read, at least one job; undefined gives the CLI rule back', () => {
    try {
      shareCores(4);
      assert.equal(sharedWith(), 4);
      assert.deepEqual(aiThreads({}, sharedWith(), 8), { threads: 8, spin: false });
      shareCores(0);
      assert.equal(sharedWith(), 1);
      shareCores(undefined);
      assert.equal(sharedWith(), undefined);
      assert.equal(aiThreads({}).spin, true);
    } finally {
      shareCores(undefined);
    }
  });

  it('a daemon tells the rule its JOB_CONCURRENCY', async () => {
    const s = await startServer({ env: { JOB_CONCURRENCY: '3' } });
    try {
      assert.equal(sharedWith(), 3);
    } finally {
      await s.close();
      shareCores(undefined);
    }
  });

  it('the session options carry the thread count, and turn spinning off only when told', () => {
    const daemon = ortSessionOptions('cpu', { threads: 2, spin: false });
    assert.equal(daemon.intraOpNumThreads, 2);
    assert.deepEqual(daemon.extra, { session: { intra_op: { allow_spinning: '0' } } });
    const cli = ortSessionOptions('cpu', { threads: 8, spin: true });
    assert.equal(cli.intraOpNumThreads, 8);
    assert.equal(cli.extra, undefined);
  });
});

describe('AI threads: what reaches onnxruntime', () => {
  const dir = tempDir('kiln-ai-threads-');
  const model = path.join(dir, 'add.onnx');
  let ort: OrtApi;
  const env = process.env.KILN_AI_THREADS;

  before(async () => {
    await installRuntime(dir, onnxruntime, (p) => fetchTarball(p, sharedCacheDir()));
    ort = createRequire(path.join(runtimeLink(dir, 'onnxruntime'), 'node_modules', 'index.js'))('onnxruntime-node') as OrtApi;
    // y = x + 1 on 1×4.
    writeFileSync(
      model,
      onnxModel({
        nodes: [{ op: 'Add', inputs: ['x', 'one'], outputs: ['y'] }],
        initializers: [{ name: 'one', dims: [1], values: [1] }],
        inputs: [{ name: 'x', shape: [1, 4] }],
        outputs: [{ name: 'y', shape: [1, 4] }],
      }),
    );
  });
  after(() => {
    shareCores(undefined);
    if (env === undefined) delete process.env.KILN_AI_THREADS;
    else process.env.KILN_AI_THREADS = env;
  });

  const threadsNow = () => readdirSync('/proc/self/task').length;
  const open = () => ortSession({ file: () => model, runtime: ort, device: 'cpu' }, 'add.onnx');

  it("a daemon's session (spinning off) opens the threads asked for, and runs", async () => {
    shareCores(2);
    process.env.KILN_AI_THREADS = '1';
    // The first session starts onnxruntime's own machinery: count from the second one on.
    await open();
    const t0 = threadsNow();
    await open();
    assert.equal(threadsNow(), t0, 'one thread: the caller, no pool');
    process.env.KILN_AI_THREADS = '3';
    const { session } = await open();
    assert.equal(threadsNow(), t0 + 2, 'three threads: the caller and a pool of two');
    const out = await session.run({ x: new ort.Tensor('float32', Float32Array.from([1, 2, 3, 4]), [1, 4]) });
    assert.deepEqual([...out.y!.data], [2, 3, 4, 5]);
  });

  it('the binding reads the nested extra options: a value of the wrong type is refused', async () => {
    const opts = ortSessionOptions('cpu', { threads: 1, spin: false });
    await ort.InferenceSession.create(model, opts);
    await assert.rejects(
      ort.InferenceSession.create(model, { ...opts, extra: { session: { intra_op: { allow_spinning: 0 } } } }),
      /extra value must be a string/,
    );
  });
});
