/**
 * Progress streams over real HTTP: event ids are unique and increase on a stream and across a reconnect
 * with Last-Event-ID, for a real resize held in the queue behind a blocker and then run; a batch's final
 * event is the same live and late.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { filePart, form, heldJob, type SseEvent, startServer, type TestServer } from '../helpers/server.js';

const dir = tempDir();

/** Reads events until `stop` says so, the final event, or the time-out; then drops the connection. */
async function readEvents(
  url: string,
  token: string,
  opts: { lastEventId?: string; stop?: (events: SseEvent[]) => boolean; timeoutMs?: number } = {},
): Promise<SseEvent[]> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), opts.timeoutMs ?? 20_000);
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (opts.lastEventId !== undefined) headers['last-event-id'] = opts.lastEventId;
  const events: SseEvent[] = [];
  try {
    const res = await fetch(url, { headers, signal: ac.signal });
    assert.equal(res.status, 200);
    const decoder = new TextDecoder();
    let buf = '';
    outer: for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buf += decoder.decode(chunk, { stream: true });
      let i: number;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const e: Partial<SseEvent> = {};
        for (const line of block.split('\n')) {
          if (line.startsWith('id: ')) e.id = line.slice(4);
          else if (line.startsWith('event: ')) e.event = line.slice(7);
          else if (line.startsWith('data: ')) e.data = JSON.parse(line.slice(6));
        }
        if (!e.event) continue;
        events.push(e as SseEvent);
        if (e.event !== 'progress' || opts.stop?.(events)) break outer;
      }
    }
  } catch (e) {
    if (!/abort/i.test((e as Error).message)) throw e;
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
  return events;
}

function ids(events: SseEvent[]): number[] {
  return events.map((e) => Number(e.id));
}

function assertIncreasing(list: number[], after = 0): void {
  let prev = after;
  for (const id of list) {
    assert.ok(Number.isSafeInteger(id) && id > prev, `ids must increase: ${JSON.stringify(list)} (after ${after})`);
    prev = id;
  }
}

describe('progress stream ids', () => {
  let s: TestServer;
  let jpg: string;
  before(async () => {
    s = await startServer({ env: { SYNC_WAIT_MS: '0', JOB_CONCURRENCY: '1' } });
    jpg = await makeImage(dir, 'sse.jpg', 400, 300);
  });
  after(() => s.close());

  it('gives the first events of a stream distinct, increasing ids', async () => {
    const { jobId, release } = await heldJob(s, jpg);
    const url = `${s.url}/api/v1/jobs/${jobId}/progress`;
    let released = false;
    const events = await readEvents(url, s.token, {
      stop: () => {
        // The snapshot of the queued job has arrived: let the run go, its own events follow.
        if (!released) {
          released = true;
          void release();
        }
        return false;
      },
    });
    assert.equal(events.at(-1)?.event, 'completed', JSON.stringify(events));
    assert.ok(events.length >= 3, `the snapshot, live progress and the end: ${JSON.stringify(events)}`);
    assertIncreasing(ids(events));
  });

  it('continues after Last-Event-ID on a reconnect, also once the job has ended', async () => {
    const { jobId, release } = await heldJob(s, jpg);
    const url = `${s.url}/api/v1/jobs/${jobId}/progress`;
    const first = await readEvents(url, s.token, { stop: () => true });
    assert.equal(first.length, 1);
    assert.equal(first[0]!.event, 'progress');
    const seen = Number(first[0]!.id);
    // The client reconnects, says where it was, and the run starts meanwhile.
    let released = false;
    const second = await readEvents(url, s.token, {
      lastEventId: String(seen),
      stop: () => {
        if (!released) {
          released = true;
          void release();
        }
        return false;
      },
    });
    assert.equal(second.at(-1)?.event, 'completed', JSON.stringify(second));
    assertIncreasing(ids(second), seen);
    // After the end: the final event again, with an id past the last one the client holds.
    const last = Number(second.at(-1)!.id);
    const third = await readEvents(url, s.token, { lastEventId: String(last) });
    assert.deepEqual(
      third.map((e) => e.event),
      ['completed'],
    );
    assertIncreasing(ids(third), last);
    // Without Last-Event-ID (or with garbage) a new stream starts from 1.
    const fresh = await readEvents(url, s.token, { lastEventId: 'not-a-number' });
    assert.deepEqual(ids(fresh), [1]);
  });

  it('answers HEAD on the stream of a running job with its headers at once', async () => {
    const { jobId, release } = await heldJob(s, jpg);
    try {
      const head = await fetch(`${s.url}/api/v1/jobs/${jobId}/progress`, {
        method: 'HEAD',
        headers: { authorization: `Bearer ${s.token}` },
        signal: AbortSignal.timeout(3000),
      });
      assert.equal(head.status, 200);
      assert.match(head.headers.get('content-type') ?? '', /^text\/event-stream/);
    } finally {
      await release();
    }
  });

  it("a batch's completed event carries the same result live, on a late stream and in the job", async () => {
    let free = () => {};
    const blocker = s.app.kiln.jobs.queue.run(`blocker-${Math.random()}`, () => new Promise<void>((r) => (free = r)));
    const res = await fetch(`${s.url}/api/v1/tools/image/resize/batch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.token}`, prefer: 'respond-async' },
      body: await form({ files: [await filePart(jpg), await filePart(jpg)], settings: '{"width": 40}' }),
    });
    assert.equal(res.status, 202, await res.clone().text());
    const { jobId } = (await res.json()) as { jobId: string };
    const url = `${s.url}/api/v1/jobs/${jobId}/progress`;
    let released = false;
    const live = await readEvents(url, s.token, {
      stop: () => {
        // Subscribed while the items wait behind the blocker: the end comes as a live event.
        if (!released) {
          released = true;
          free();
        }
        return false;
      },
    });
    await blocker;
    assert.ok(released);
    assert.equal(live.at(-1)?.event, 'completed', JSON.stringify(live));
    const late = await readEvents(url, s.token);
    assert.equal(late.at(-1)?.event, 'completed');
    const job = await (await fetch(`${s.url}/api/v1/jobs/${jobId}`, { headers: { authorization: `Bearer ${s.token}` } })).json();
    // The live event had the counts at its top level too (total, succeeded, failed), which neither the
    // late event nor the job's result has: one shape, the counts in data.
    assert.deepEqual(live.at(-1)!.data, late.at(-1)!.data);
    assert.deepEqual(live.at(-1)!.data, job.result);
    assert.deepEqual((live.at(-1)!.data as { data: unknown }).data, { total: 2, succeeded: 2, failed: 0 });
  });
});
