/** The in-process queue: bounded concurrency, FIFO order, cancellation of queued and running tasks. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KilnError } from '../../src/core/errors.js';
import { InProcessQueue } from '../../daemon/queue/in-process.js';

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('in-process queue', () => {
  it('runs at most `concurrency` tasks, in arrival order', async () => {
    const q = new InProcessQueue(2);
    const gates = [deferred(), deferred(), deferred(), deferred()];
    const started: number[] = [];
    const runs = gates.map((g, i) =>
      q.run(`j${i}`, async () => {
        started.push(i);
        await g.promise;
        return i;
      }),
    );
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(started, [0, 1]);
    assert.deepEqual(q.state(), { kind: 'in-process', concurrency: 2, running: 2, queued: 2 });
    gates[1]!.resolve();
    await runs[1];
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(started, [0, 1, 2]);
    for (const g of gates) g.resolve();
    assert.deepEqual(await Promise.all(runs), [0, 1, 2, 3]);
  });

  it('cancels a queued task without running it and aborts a running one', async () => {
    const q = new InProcessQueue(1);
    let aborted = false;
    const running = q.run(
      'a',
      (signal) =>
        new Promise<string>((resolve) =>
          signal.addEventListener('abort', () => {
            aborted = true;
            resolve('stopped');
          }),
        ),
    );
    let ran = false;
    const queued = q.run('b', async () => {
      ran = true;
    });
    assert.equal(q.cancel('b'), true);
    await assert.rejects(queued, (e: unknown) => e instanceof KilnError && e.code === 'CANCELLED');
    assert.equal(q.cancel('a'), true);
    assert.equal(await running, 'stopped');
    assert.equal(aborted, true);
    assert.equal(ran, false);
    assert.equal(q.cancel('nope'), false);
  });

  it('refuses work after close and aborts what runs', async () => {
    const q = new InProcessQueue(1);
    const running = q.run('a', (signal) => new Promise<boolean>((resolve) => signal.addEventListener('abort', () => resolve(true))));
    const waiting = q.run('b', async () => 1);
    await q.close();
    assert.equal(await running, true);
    await assert.rejects(waiting, (e: unknown) => e instanceof KilnError && e.code === 'CANCELLED');
    await assert.rejects(
      q.run('c', async () => 1),
      (e: unknown) => e instanceof KilnError && e.code === 'UNAVAILABLE',
    );
  });

  it('reserves a free slot for a run that comes a moment later, ahead of runs queued meanwhile', async () => {
    const q = new InProcessQueue(1);
    assert.equal(q.reserve('a'), true);
    // The slot is taken: nothing else reserves it or starts in it.
    assert.equal(q.reserve('b'), false);
    assert.deepEqual(q.state(), { kind: 'in-process', concurrency: 1, running: 1, queued: 0 });
    const order: string[] = [];
    const b = q.run('b', async () => void order.push('b'));
    const gate = deferred();
    const a = q.run('a', async () => {
      order.push('a');
      await gate.promise;
    });
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(order, ['a']);
    // Something waits now: a free slot would go to it, not to a new reservation.
    assert.equal(q.reserve('c'), false);
    gate.resolve();
    await Promise.all([a, b]);
    assert.deepEqual(order, ['a', 'b']);
  });

  it('gives back a reservation whose run does not come, to whatever waits', async () => {
    const q = new InProcessQueue(1);
    assert.equal(q.reserve('a'), true);
    let ran = false;
    const b = q.run('b', async () => {
      ran = true;
    });
    await new Promise((r) => setImmediate(r));
    assert.equal(ran, false);
    q.unreserve('a');
    await b;
    assert.equal(ran, true);
    await new Promise((r) => setImmediate(r)); // the slot is let go just after the run settles
    assert.deepEqual(q.state(), { kind: 'in-process', concurrency: 1, running: 0, queued: 0 });
  });
});
