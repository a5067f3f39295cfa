/**
 * Moving pixels to and from worker threads (src/core/transfer.ts, src/ai/host/transfer.ts): a buffer
 * node will not let go — sharp's output, one marked untransferable — is copied, on every node version.
 * Node ≥ 21 throws on a transfer list that names one: every AI tool failed that way on node 22 and 24.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MessageChannel, markAsUntransferable } from 'node:worker_threads';
import sharp from 'sharp';
import { transferables } from '../../src/ai/host/transfer.js';
import { canMove } from '../../src/core/transfer.js';
import { nonLocalMeansOffThread } from '../../src/tools/image/ai/nlm-worker.js';

/** Posts `message` with the transfer list transferables() makes for it; resolves with what arrived. */
function postThrough<T>(message: T): Promise<T> {
  const { port1, port2 } = new MessageChannel();
  const close = () => {
    port1.close();
    port2.close();
  };
  return new Promise<T>((resolve) => {
    port2.once('message', (m: T) => {
      close();
      resolve(m);
    });
    try {
      port1.postMessage(message, transferables(message));
    } catch (e) {
      close();
      throw e;
    }
  });
}

/** Raw RGB pixels as sharp hands them over: memory sharp allocated, behind a Buffer. */
async function sharpPixels(width: number, height: number): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: '#c85a1e', noise: { type: 'gaussian', mean: 128, sigma: 30 } } })
    .raw()
    .toBuffer();
}

describe('moving buffers between threads', () => {
  it('moves an ArrayBuffer of this thread and no shared one', () => {
    assert.equal(canMove(new ArrayBuffer(16)), true);
    assert.equal(canMove(new SharedArrayBuffer(16)), false);
  });

  it("copies sharp's pixels instead of failing, and they arrive whole", async () => {
    const px = await sharpPixels(16, 12);
    const copy = Buffer.from(px);
    const got = await postThrough({ px, width: 16 });
    assert.deepEqual(Buffer.from(got.px), copy);
    // Still the sender's: it was copied, not moved.
    assert.equal(px.byteLength, copy.byteLength);
  });

  it('copies a buffer marked untransferable and moves the others of the same message', async () => {
    const kept = new Uint8Array(32).fill(7);
    markAsUntransferable(kept.buffer);
    const moved = new Float32Array(8).fill(0.5);
    const got = await postThrough({ kept, parts: [moved] });
    assert.deepEqual([...got.kept], Array(32).fill(7));
    assert.deepEqual([...got.parts[0]!], Array(8).fill(0.5));
    assert.equal(kept.byteLength, 32);
    assert.equal(moved.byteLength, 0, 'a buffer of this thread is moved (detached here)');
  });

  it("runs non-local means in its worker on sharp's pixels", async () => {
    const px = await sharpPixels(24, 16);
    const before = Buffer.from(px);
    const out = await nonLocalMeansOffThread({ px, width: 24, height: 16, channels: 3, opts: { hLuma: 20, hChroma: 20 } });
    assert.equal(out.length, before.length);
    assert.notDeepEqual(Buffer.from(out), before, 'the noise was filtered');
  });
});
