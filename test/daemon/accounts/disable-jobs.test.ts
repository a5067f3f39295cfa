/**
 * Disabling an account stops its work: the jobs it had queued are cancelled (before, they started
 * later and delivered outputs for an account nobody may use any more), and the update says how many.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { makeImage, tempDir } from '../../helpers/fixtures.js';
import { filePart, form, startServer } from '../../helpers/server.js';
import { call, makeUser } from './http.js';

describe('disabling a user', () => {
  it("cancels the user's queued jobs; another user's job still runs", async () => {
    const s = await startServer({ env: { SYNC_WAIT_MS: '0', JOB_CONCURRENCY: '1' } });
    let release = () => {};
    try {
      // The only slot is held, so the runs below stay queued until the test lets it go.
      const blocker = s.app.kiln.jobs.queue.run('blocker', () => new Promise<void>((resolve) => (release = resolve)));
      const jpg = await makeImage(tempDir(), 'in.jpg', 64, 64);
      const mallory = await makeUser(s, 'mallory');
      const ann = await makeUser(s, 'ann');
      const submit = async (token: string) => {
        const r = await call(s, 'POST', '/api/v1/tools/image/resize', {
          token,
          form: await form({ file: await filePart(jpg), settings: '{"width": 16}' }),
        });
        assert.equal(r.status, 202, JSON.stringify(r.json));
        return r.json.jobId as string;
      };
      const hers = await submit(mallory.token);
      const other = await submit(ann.token);

      const up = await call(s, 'PUT', `/api/auth/users/${mallory.id}`, { body: { disabled: true } });
      assert.equal(up.status, 200, JSON.stringify(up.json));
      const job = await call(s, 'GET', `/api/v1/jobs/${hers}`);
      assert.equal(job.json.status, 'cancelled');
      assert.equal(job.json.error.code, 'CANCELLED');
      assert.equal(existsSync(path.join(s.dataDir, 'jobs', hers)), false, 'the cancelled job keeps no files');
      const audit = await call(s, 'GET', '/api/v1/admin/audit?event=user.update');
      assert.equal(audit.status, 200, JSON.stringify(audit.json));
      assert.ok(
        JSON.stringify(audit.json).includes('"jobsCancelled":1'),
        `the audit entry counts the cancelled job: ${JSON.stringify(audit.json).slice(0, 400)}`,
      );

      release();
      await blocker;
      let done: { status: string } | undefined;
      for (let i = 0; i < 200 && done?.status !== 'completed'; i++) {
        done = (await call(s, 'GET', `/api/v1/jobs/${other}`)).json;
        if (done?.status !== 'completed') await new Promise((r) => setTimeout(r, 50));
      }
      assert.equal(done?.status, 'completed');
      assert.equal((await call(s, 'GET', `/api/v1/jobs/${hers}`)).json.status, 'cancelled');
    } finally {
      release();
      await s.close();
    }
  });
});
