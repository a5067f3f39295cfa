/**
 * Jobs on object storage: deleting a user removes its jobs' objects from the bucket, not only their
 * records and local directories (the sweep goes by records, so an object left then was never removed);
 * a cancel that comes while a run's follow-up (the library save) goes on still leaves its output stored.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LibrarySaver } from '../../daemon/jobs/service.js';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { filePart, form, startServer, type TestServer } from '../helpers/server.js';
import { call, makeUser } from './accounts/http.js';

// Every server of this file keeps its files in a bucket of its own s3rver (test/helpers/server.ts).
process.env.KILN_TEST_S3 = '1';

describe('jobs on object storage', () => {
  let s: TestServer;
  const dir = tempDir();
  before(async () => {
    s = await startServer();
  });
  after(() => s.close());

  it('removes the outputs of the user’s jobs from the bucket', async () => {
    assert.equal(s.app.kiln.storage.kind, 's3');
    const u = await makeUser(s, 'olga');
    const jpg = await makeImage(dir, 'olga.jpg', 40, 30);
    const run = await call(s, 'POST', '/api/v1/tools/image/resize', {
      token: u.token,
      form: await form({ file: await filePart(jpg), settings: '{"width": 20}' }),
    });
    assert.equal(run.status, 200, JSON.stringify(run.json));
    const objects = async () => {
      const keys: string[] = [];
      for await (const o of s.app.kiln.storage.list(`jobs/${run.json.jobId}/`)) keys.push(o.key);
      return keys;
    };
    assert.equal((await objects()).length, 1, 'the output is in the bucket');
    const del = await call(s, 'DELETE', `/api/auth/users/${u.id}`);
    assert.equal(del.status, 200, JSON.stringify(del.json));
    assert.equal(del.json.jobsDeleted, 1);
    assert.deepEqual(await objects(), []);
  });

  it('a cancel during the library save leaves the completed job with its output in the bucket', async () => {
    const auth = { authorization: `Bearer ${s.token}` };
    const png = await makeImage(dir, 'lib.png', 60, 40, { format: 'png' });
    const up = await fetch(`${s.url}/api/v1/files`, { method: 'POST', headers: auth, body: await form({ file: await filePart(png) }) });
    assert.equal(up.status, 201);
    const item = (await up.json()) as { id: string };
    const jobs = s.app.kiln.jobs;
    const save = (jobs as unknown as { librarySaver: LibrarySaver }).librarySaver;
    let entered = () => {};
    const saving = new Promise<void>((r) => (entered = r));
    // The save is slow enough for the cancel to arrive while it goes on.
    jobs.setLibrarySaver(async (...args) => {
      entered();
      await new Promise((r) => setTimeout(r, 800));
      return save(...args);
    });
    try {
      const run = await fetch(`${s.url}/api/v1/tools/image/resize`, {
        method: 'POST',
        headers: { ...auth, prefer: 'respond-async' },
        body: await form({ fileId: item.id, settings: '{"width": 30}' }),
      });
      assert.equal(run.status, 202);
      const { jobId } = (await run.json()) as { jobId: string };
      await saving;
      const cancel = await fetch(`${s.url}/api/v1/jobs/${jobId}/cancel`, { method: 'POST', headers: auth });
      const job = (await cancel.json()) as { status: string; result: { downloadUrl: string; savedFileId: string } };
      // Too late to cancel: the save went through, so the job completed with everything it promises.
      assert.equal(job.status, 'completed', JSON.stringify(job));
      assert.equal(job.result.savedFileId, item.id);
      const dl = await fetch(s.url + job.result.downloadUrl, { headers: auth });
      assert.equal(dl.status, 200, await dl.clone().text());
      assert.ok((await dl.arrayBuffer()).byteLength > 0);
    } finally {
      jobs.setLibrarySaver(save);
    }
  });
});
