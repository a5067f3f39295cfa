/**
 * Issue #21 items 9 and 12: an upload still streaming when its user is deleted is refused at commit and
 * leaves nothing behind; audit events and throttle counters are pruned by the job sweeper after their
 * retention, never a running lock.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startServer } from '../../helpers/server.js';
import { call, makeUser } from './http.js';

const enc = (s: string) => new TextEncoder().encode(s);

describe('user deletion and retention', () => {
  it('an upload in flight when its user is deleted is refused at commit; nothing is left owned by nobody', async () => {
    const s = await startServer();
    try {
      const u = await makeUser(s, 'uploader');
      const boundary = 'kiln-test-boundary';
      let release!: () => void;
      const gate = new Promise<void>((r) => {
        release = r;
      });
      const body = new ReadableStream<Uint8Array>({
        async start(ctrl) {
          ctrl.enqueue(
            enc(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="notes.txt"\r\nContent-Type: text/plain\r\n\r\n`),
          );
          ctrl.enqueue(enc('first half of the notes\n'.repeat(200)));
          await gate;
          ctrl.enqueue(enc(`${'second half\n'.repeat(200)}\r\n--${boundary}--\r\n`));
          ctrl.close();
        },
      });
      const upload = fetch(`${s.url}/api/v1/files`, {
        method: 'POST',
        headers: { authorization: `Bearer ${u.token}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
        body,
        duplex: 'half',
      } as RequestInit);
      await new Promise((r) => setTimeout(r, 400));
      const del = await call(s, 'DELETE', `/api/auth/users/${u.id}`);
      assert.equal(del.status, 200, JSON.stringify(del.json));
      release();
      const res = await upload;
      const answer = (await res.json()) as { error?: { code: string; reason?: string } };
      assert.equal(res.status, 401, JSON.stringify(answer));
      assert.equal(answer.error?.reason, 'account-deleted');
      const left = await s.app.kiln.store.db.selectFrom('library_items').select('id').where('owner_id', '=', u.id).execute();
      assert.deepEqual(left, []);
      const blobs = await s.app.kiln.store.db.selectFrom('library_blobs').select('hash').execute();
      assert.deepEqual(blobs, [], 'the uploaded content was released');
    } finally {
      await s.close();
    }
  });

  it('the job sweeper prunes audit events and idle throttle counters after their retention, never a running lock', async () => {
    // A day of retention, and the rows made two days old in the database: no race with slow logins on a
    // loaded machine (scrypt), and the lock itself still runs (only its counter's first_at moves back).
    const s = await startServer({ env: { AUDIT_RETENTION_DAYS: '1', THROTTLE_RETENTION_DAYS: '1', LOGIN_MAX_FAILURES: '2' } });
    try {
      const db = s.app.kiln.store.db;
      const fail = (username: string) => call(s, 'POST', '/api/auth/login', { token: null, body: { username, password: 'wrong-wrong' } });
      for (let i = 0; i < 5; i++) assert.equal((await fail(`ghost-${i}`)).status, 401);
      assert.equal((await fail('lockme')).status, 401);
      assert.equal((await fail('lockme')).status, 429);
      const before = await db.selectFrom('login_throttle').select('key').execute();
      assert.ok(before.length >= 12, `${before.length} throttle rows`);
      assert.ok((await db.selectFrom('audit_events').select('id').execute()).length >= 7);
      const twoDays = 2 * 86_400_000;
      await db
        .updateTable('login_throttle')
        .set((eb) => ({ first_at: eb('first_at', '-', twoDays) }))
        .execute();
      await db
        .updateTable('audit_events')
        .set((eb) => ({ at: eb('at', '-', twoDays) }))
        .execute();
      await s.app.kiln.jobs.sweep();
      const keys = (await db.selectFrom('login_throttle').select('key').execute()).map((r) => r.key);
      assert.ok(
        keys.some((k) => k.startsWith('pair:') && k.endsWith(' lockme')),
        `the running lock stays: ${keys}`,
      );
      assert.ok(!keys.some((k) => k.includes('ghost')), `idle counters are gone: ${keys}`);
      assert.equal((await db.selectFrom('audit_events').select('id').execute()).length, 0);
      // The lock still holds after the sweep.
      assert.equal((await fail('lockme')).status, 429);
    } finally {
      await s.close();
    }
  });
});
