/**
 * Jobs at the edges of their lifetime: a cancel whose job finished between the route's read and the
 * cancel itself keeps the completed job's output; an output the TTL sweep removes is a 404 if it goes
 * before the download opens it, and does not cut a download that has opened it.
 */
import assert from 'node:assert/strict';
import { writeFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { buffer } from 'node:stream/consumers';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { api, filePart, form, startServer, type TestServer } from '../helpers/server.js';
import { getJob } from '../../daemon/store/jobs.js';
import { openOutput } from '../../daemon/storage/job-files.js';
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

  it('an output removed before it is opened is NOT_FOUND; once open, its removal does not cut the download', async () => {
    const storage = new LocalStorage(dir);
    const file = path.join(dir, 'swept.bin');
    const bytes = Buffer.alloc(256 * 1024, 7);
    await writeFile(file, bytes);
    const stream = await openOutput(storage, file);
    // The sweep runs while the download goes on.
    await rm(file);
    assert.equal((await buffer(stream)).length, bytes.length);
    // Opened lazily, a file already gone was a stream that failed on its first read: a 500 after the
    // file's headers, with the server's path in the message.
    await assert.rejects(openOutput(storage, file), (e: KilnError) => e.code === 'NOT_FOUND' && !e.message.includes(dir));
  });
});
