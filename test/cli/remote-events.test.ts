/**
 * The CLI's progress stream (`kiln jobs watch`, a remote run's 202) behind a proxy that cuts every
 * connection after a moment, as a CDN caps a response's duration: the client reconnects with
 * Last-Event-ID for as long as the streams bring news, and gives up only on streams that bring none.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { RemoteClient } from '../../src/cli/remote/client.js';
import type { KilnError } from '../../src/core/errors.js';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { filePart, form, startServer, type TestServer } from '../helpers/server.js';

/** A TCP relay to `port` that closes each connection `cutMs` after it opened; counts the connections. */
async function cuttingRelay(port: number, cutMs: number): Promise<{ url: string; connections(): number; close(): Promise<void> }> {
  let n = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    n++;
    const up = net.connect(port, '127.0.0.1');
    for (const s of [client, up]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => {
        sockets.delete(s);
        client.destroy();
        up.destroy();
      });
    }
    client.pipe(up).pipe(client);
    setTimeout(() => client.destroy(), cutMs).unref();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    connections: () => n,
    close: () =>
      new Promise((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

describe('remote progress stream through a proxy that cuts connections', () => {
  const dir = tempDir();
  let s: TestServer;
  let jpg: string;
  before(async () => {
    s = await startServer({ env: { SYNC_WAIT_MS: '0', JOB_CONCURRENCY: '1' } });
    jpg = await makeImage(dir, 'watched.jpg', 200, 100);
  });
  after(() => s.close());

  /** A resize held in the queue behind a blocker until release(). */
  async function heldJob(): Promise<{ jobId: string; release: () => Promise<void> }> {
    let free = () => {};
    const blocker = s.app.kiln.jobs.queue.run(`blocker-${Math.random()}`, () => new Promise<void>((r) => (free = r)));
    const res = await fetch(`${s.url}/api/v1/tools/image/resize`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.token}` },
      body: await form({ file: await filePart(jpg), settings: '{"width": 50}' }),
    });
    assert.equal(res.status, 202);
    const { jobId } = (await res.json()) as { jobId: string };
    return {
      jobId,
      release: async () => {
        free();
        await blocker;
      },
    };
  }

  it('follows a job through more reconnects than the limit while each stream brings its state', async () => {
    const relay = await cuttingRelay(Number(new URL(s.url).port), 150);
    const { jobId, release } = await heldJob();
    try {
      const client = new RemoteClient(relay.url, s.token);
      const events: string[] = [];
      let released = false;
      for await (const e of client.events(jobId, AbortSignal.timeout(30_000))) {
        events.push(e.type);
        // Eight cut streams, each with the job's state; then the run goes and the stream ends with it.
        if (!released && relay.connections() >= 8) {
          released = true;
          void release();
        }
      }
      assert.ok(released, `released after ${relay.connections()} connections`);
      assert.equal(events.at(-1), 'completed', events.join(','));
    } finally {
      await release();
      await relay.close();
    }
  });

  it('still gives up, UNAVAILABLE, when the streams keep closing with nothing', async () => {
    // Cut before the daemon can answer: no stream delivers an event.
    const relay = await cuttingRelay(Number(new URL(s.url).port), 0);
    const { jobId, release } = await heldJob();
    try {
      const client = new RemoteClient(relay.url, s.token);
      await assert.rejects(
        (async () => {
          for await (const _ of client.events(jobId, AbortSignal.timeout(30_000)));
        })(),
        (e: KilnError) => e.code === 'UNAVAILABLE',
      );
    } finally {
      await release();
      await relay.close();
    }
  });
});
