/**
 * Jobs at the edges of their lifetime: a cancel whose job finished between the route's read and the
 * cancel itself keeps the completed job's output; an output the TTL sweep removes is a 404 if it goes
 * before the download opens it, and does not cut a download that has opened it; a batch cancelled
 * before its items ran neither reports them done nor leaves one queued behind other jobs.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { buffer } from 'node:stream/consumers';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { api, filePart, form, startServer, type TestServer } from '../helpers/server.js';
import { getJob } from '../../daemon/store/jobs.js';
import { runBatchItems } from '../../daemon/jobs/batch-run.js';
import { findTarget } from '../../daemon/jobs/targets.js';
import { within } from '../../daemon/jobs/within.js';
import { InProcessQueue } from '../../daemon/queue/in-process.js';
import { inputFile } from '../../src/tools/run-tool.js';
import { openOutput, readOutput } from '../../daemon/storage/job-files.js';
import { LocalStorage } from '../../daemon/storage/local.js';
import type { KilnError } from '../../src/core/errors.js';

const dir = tempDir();

describe('job races', () => {
  let s: TestServer;
  let png: string;
  before(async () => {
    s = await startServer();
    png = await makeImage(dir, 'race.png', 64, 48);
  });
  after(() => s.close());

  it('a cancel that comes as the run ends leaves the completed job its output', async () => {
    const run = await api(
      s,
      s.token,
      'POST',
      '/api/v1/tools/image/resize',
      await form({ file: await filePart(png), settings: '{"width":16}' }),
    );
    assert.equal(run.status, 200, run.text);
    const done = await getJob(s.app.kiln.store.db, run.body.jobId);
    assert.equal(done?.status, 'completed');
    // The cancel route read the row while the job still ran; by the time it cancels, the run is over
    // (no longer queued or tracked here). The window is a few milliseconds over HTTP, so the row as the
    // route read it is handed over directly.
    const ended = await s.app.kiln.jobs.cancel({ ...done!, status: 'running', finished_at: null, output_path: null });
    assert.equal(ended.status, 'completed');
    const dl = await fetch(s.url + run.body.downloadUrl, { headers: { authorization: `Bearer ${s.token}` } });
    assert.equal(dl.status, 200, await dl.clone().text());
    assert.equal((await sharp(Buffer.from(await dl.arrayBuffer())).metadata()).width, 16);
  });

  it('an output removed before it is opened is gone; once open, its removal does not cut the download', async () => {
    const storage = new LocalStorage(dir);
    const file = path.join(dir, 'swept.bin');
    // One above the size read whole (a stream) and one below (a buffer).
    for (const size of [256 * 1024, 1000]) {
      const bytes = Buffer.alloc(size, 7);
      await writeFile(file, bytes);
      const out = await openOutput(storage, file);
      assert.equal(out?.size, size);
      // The sweep runs while the download goes on.
      await rm(file);
      const body = await out!.read();
      assert.equal(Buffer.isBuffer(body), size <= 64 * 1024);
      assert.deepEqual(Buffer.isBuffer(body) ? body : await buffer(body), bytes);
      // Opened lazily, a file already gone was a stream that failed on its first read: a 500 after the
      // file's headers, with the server's path in the message.
      assert.equal(await openOutput(storage, file), undefined);
      await assert.rejects(readOutput(storage, file), (e: KilnError) => e.code === 'NOT_FOUND' && !e.message.includes(dir));
    }
  });

  it('a batch cancelled while its items wait reports none of them done', async () => {
    // Every slot held: the batch's items wait in the queue until the cancel drops them.
    const frees: (() => void)[] = [];
    const blockers = Array.from({ length: s.config.jobConcurrency }, (_, i) =>
      s.app.kiln.jobs.queue.run(`batch-blocker-${i}`, () => new Promise<void>((r) => frees.push(r))),
    );
    try {
      const res = await fetch(`${s.url}/api/v1/tools/image/resize/batch`, {
        method: 'POST',
        headers: { authorization: `Bearer ${s.token}`, prefer: 'respond-async' },
        body: await form({ files: [await filePart(png), await filePart(png), await filePart(png)], settings: '{"width": 8}' }),
      });
      assert.equal(res.status, 202, await res.clone().text());
      const { jobId } = (await res.json()) as { jobId: string };
      // The three items wait in the queue behind the blockers.
      for (let i = 0; i < 200 && s.app.kiln.jobs.queue.state().queued < 3; i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal(s.app.kiln.jobs.queue.state().queued, 3);
      const c = await api(s, s.token, 'POST', `/api/v1/jobs/${jobId}/cancel`);
      assert.equal(c.status, 200, c.text);
      assert.equal(c.body.status, 'cancelled');
      // It was "3/3, 100%": every dropped item counted as finished.
      assert.deepEqual(c.body.progress, { percent: 0, stage: 'cancelled' });
    } finally {
      for (const f of frees) f();
      await Promise.all(blockers);
    }
  });

  it('a cancel that comes while batch items are being set up queues none of them', async () => {
    // One slot, held: an item queued after the cancel would wait for it (and the cancel with it).
    const queue = new InProcessQueue(1);
    let free = () => {};
    const blocker = queue.run('blocker', () => new Promise<void>((r) => (free = r)));
    const target = findTarget('resize')!;
    const ac = new AbortController();
    ac.abort();
    let counted = 0;
    try {
      const items = await within(
        runBatchItems({
          id: 'b'.repeat(24),
          target,
          settings: { width: 8 },
          files: [await inputFile(png), await inputFile(png)],
          workDir: await mkdtemp(path.join(dir, 'batch-')),
          queue,
          config: { dataDir: dir, allowPostScript: false },
          signal: ac.signal,
          onItem: () => counted++,
        }),
        5000,
      );
      assert.ok(items, 'the items were queued behind the blocker instead of ending at once');
      assert.deepEqual(
        items.map((m) => m.error?.code),
        ['CANCELLED', 'CANCELLED'],
      );
      assert.equal(counted, 0);
      assert.equal(queue.state().queued, 0);
    } finally {
      free();
      await blocker;
    }
  });
});
