/**
 * The CLI's progress stream (`kiln jobs watch`, a remote run's 202) behind a proxy that cuts every
 * connection after a moment, as a CDN caps a response's duration: the client reconnects with
 * Last-Event-ID for as long as the streams bring news, and gives up only on streams that bring none.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { RemoteClient } from '../../src/cli/remote/client.js';
import type { KilnError } from '../../src/core/errors.js';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { heldJob, startServer, type TestServer } from '../helpers/server.js';
import { tcpRelay } from '../helpers/tcp-relay.js';

describe('remote progress stream through a proxy that cuts connections', () => {
  const dir = tempDir();
  let s: TestServer;
  let jpg: string;
  before(async () => {
    s = await startServer({ env: { SYNC_WAIT_MS: '0', JOB_CONCURRENCY: '1' } });
    jpg = await makeImage(dir, 'watched.jpg', 200, 100);
  });
  after(() => s.close());

  it('follows a job through more reconnects than the limit while each stream brings its state', async () => {
    const relay = await tcpRelay('127.0.0.1', Number(new URL(s.url).port), { cutAfterMs: 150 });
    const { jobId, release } = await heldJob(s, jpg, 50);
    try {
      const client = new RemoteClient(`http://127.0.0.1:${relay.port}`, s.token);
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
    const relay = await tcpRelay('127.0.0.1', Number(new URL(s.url).port), { cutAfterMs: 0 });
    const { jobId, release } = await heldJob(s, jpg, 50);
    try {
      const client = new RemoteClient(`http://127.0.0.1:${relay.port}`, s.token);
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
