/**
 * Object storage: deleting a user removes its jobs' objects from the bucket, not only their records
 * and local directories (the sweep goes by records, so an object left then was never removed).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { filePart, form, startServer, type TestServer } from '../helpers/server.js';
import { call, makeUser } from './accounts/http.js';

// Every server of this file keeps its files in a bucket of its own s3rver (test/helpers/server.ts).
process.env.KILN_TEST_S3 = '1';

describe('object storage: a deleted user leaves no job object behind', () => {
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
});
