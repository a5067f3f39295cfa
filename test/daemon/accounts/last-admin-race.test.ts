/**
 * The last enabled admin rule under concurrency: demotions, disablings and deletions racing each other
 * must leave one enabled admin (checked and written in one transaction, rows locked on PostgreSQL; run
 * with KILN_TEST_PG set to check that store).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { deleteUser, updateUser } from '../../../daemon/accounts/users.js';
import { api, form, startServer, type TestServer } from '../../helpers/server.js';
import { call, makeUser } from './http.js';

async function enabledAdmins(s: TestServer): Promise<number> {
  const r = await s.app.kiln.store.db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('role', '=', 'admin')
    .where('disabled_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

describe('last admin under concurrent changes', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(() => s.close());

  it('admins demoting themselves all at once leave exactly one admin', async () => {
    const others = await Promise.all(['ra1', 'ra2', 'ra3', 'ra4'].map((n) => makeUser(s, n, 'admin')));
    const me = (await call(s, 'GET', '/api/auth/session')).json.user.id as string;
    const all = [{ id: me, token: s.token }, ...others];
    const answers = await Promise.all(
      all.map((u) => call(s, 'PUT', `/api/auth/users/${u.id}`, { token: u.token, body: { role: 'user' } })),
    );
    const statuses = answers.map((a) => a.status).sort();
    assert.deepEqual(statuses, [200, 200, 200, 200, 409], JSON.stringify(answers.map((a) => a.json)));
    assert.equal(await enabledAdmins(s), 1);
  });

  it('the same through the accounts module directly, demotions, disablings and deletions interleaved', async () => {
    const db = s.app.kiln.store.db;
    await db.updateTable('users').set({ role: 'admin', disabled_at: null }).where('username', '=', 'admin').execute();
    for (let round = 0; round < 3; round++) {
      const [c1, c2] = await Promise.all([makeUser(s, `dm${round}a`, 'admin'), makeUser(s, `dm${round}b`, 'admin')]);
      // Only these two are enabled admins now.
      await db.updateTable('users').set({ role: 'user' }).where('id', 'not in', [c1.id, c2.id]).execute();
      const actor1 = { id: c1.id, username: `dm${round}a`, role: 'admin' as const, teamId: null, via: 'session' as const };
      const actor2 = { id: c2.id, username: `dm${round}b`, role: 'admin' as const, teamId: null, via: 'session' as const };
      const ops = [
        () => updateUser(db, undefined, actor1, c1.id, { role: 'user' }),
        () => updateUser(db, undefined, actor2, c1.id, { disabled: true }),
        () => deleteUser(db, undefined, undefined, actor1, c2.id, s.dataDir),
        () => updateUser(db, undefined, actor2, c2.id, { role: 'user' }),
      ];
      const settled = await Promise.allSettled(ops.map((op) => op()));
      assert.equal(await enabledAdmins(s), 1, `round ${round}: ${JSON.stringify(settled.map((r) => r.status))}`);
      await db.updateTable('users').set({ role: 'admin', disabled_at: null }).where('username', '=', 'admin').execute();
    }
  });

  it('a deletion refused as the last admin leaves the library of the admin it named', async () => {
    const db = s.app.kiln.store.db;
    const [c1, c2] = await Promise.all([makeUser(s, 'lib1', 'admin'), makeUser(s, 'lib2', 'admin')]);
    for (const c of [c1, c2]) {
      const up = await api(
        s,
        c.token,
        'POST',
        '/api/v1/files',
        await form({ file: new File([Buffer.from(`notes of ${c.id}`)], 'notes.txt') }),
      );
      assert.equal(up.status, 201, up.text);
    }
    await db.updateTable('users').set({ role: 'user' }).where('id', 'not in', [c1.id, c2.id]).execute();
    const actor = (c: { id: string }, username: string) => ({
      id: c.id,
      username,
      role: 'admin' as const,
      teamId: null,
      via: 'session' as const,
    });
    const settled = await Promise.allSettled([
      deleteUser(db, undefined, undefined, actor(c1, 'lib1'), c2.id, s.dataDir),
      deleteUser(db, undefined, undefined, actor(c2, 'lib2'), c1.id, s.dataDir),
    ]);
    assert.deepEqual(settled.map((r) => r.status).sort(), ['fulfilled', 'rejected']);
    const kept = settled[0]!.status === 'rejected' ? c2 : c1;
    const items = await db.selectFrom('library_items').select('owner_id').where('owner_id', 'in', [c1.id, c2.id]).execute();
    assert.deepEqual(
      items.map((i) => i.owner_id),
      [kept.id],
      'the admin kept has its file; the deleted one has none',
    );
    const list = await api(s, kept.token, 'GET', '/api/v1/files');
    assert.equal((list.body.items ?? list.body.files)?.length, 1, list.text);
    await db.updateTable('users').set({ role: 'admin', disabled_at: null }).where('username', '=', 'admin').execute();
  });

  it('two admins disabling and deleting each other at once leave one', async () => {
    s = await s.restart(); // a fresh session: the first test's admin may be a user now
    await s.app.kiln.store.db.updateTable('users').set({ role: 'admin' }).where('username', '=', 'admin').execute();
    await s.app.kiln.store.db.updateTable('users').set({ role: 'user' }).where('username', '!=', 'admin').execute();
    const admin = (await s.app.kiln.store.db.selectFrom('users').select(['id', 'username']).where('role', '=', 'admin').execute())[0]!;
    const tokenOf = async (username: string) =>
      username === 'admin'
        ? s.token
        : (await call(s, 'POST', '/api/auth/login', { token: null, body: { username, password: 'Correct-Horse-42' } })).json.token;
    const a = { id: admin.id, token: await tokenOf(admin.username) };
    for (let round = 0; round < 4; round++) {
      const b = await makeUser({ ...s, token: a.token }, `rb${round}`, 'admin');
      assert.equal(await enabledAdmins(s), 2);
      const [x, y] = await Promise.all([
        call(s, round % 2 ? 'DELETE' : 'PUT', `/api/auth/users/${b.id}`, {
          token: a.token,
          body: round % 2 ? undefined : { disabled: true },
        }),
        call(s, 'PUT', `/api/auth/users/${a.id}`, { token: b.token, body: { disabled: true } }),
      ]);
      // One wins; the other is refused as the last admin, or (its caller disabled first) signed out.
      assert.equal([x.status, y.status].filter((c) => c === 200).length, 1, JSON.stringify([x.json, y.json]));
      assert.ok(
        [x.status, y.status].every((c) => c === 200 || c === 409 || c === 401),
        JSON.stringify([x.json, y.json]),
      );
      assert.equal(await enabledAdmins(s), 1, `round ${round}`);
      if (y.status === 200) {
        // b disabled a: b is now the one admin; switch roles for the next round.
        a.id = b.id;
        a.token = b.token;
      }
    }
  });
});
