/**
 * Team names differing only in case or Unicode form are one name also when they are created or renamed
 * at the same moment: the database holds the rule (migration 0790), not only the look-up before the
 * write. Run with KILN_TEST_PG set to check PostgreSQL too.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { migrationDb } from '../../helpers/migration-db.js';
import { startServer, type TestServer } from '../../helpers/server.js';
import { call } from './http.js';

async function teamNames(s: TestServer): Promise<string[]> {
  const rows = await s.app.kiln.store.db.selectFrom('teams').select('name').execute();
  return rows.map((r) => r.name);
}

describe('team names under concurrent writes', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(() => s.close());

  it('created at once in different cases and Unicode forms, one gets the name and the others 409', async () => {
    for (const round of [0, 1, 2]) {
      const base = ['Design', 'Caf\u00e9', '\u00c5ngstr\u00f6m'][round]!;
      const variants = [base, base.toLowerCase(), base.toUpperCase(), base.normalize('NFD'), base.normalize('NFD').toUpperCase()];
      const names = [...variants, ...variants];
      const rs = await Promise.all(names.map((name) => call(s, 'POST', '/api/v1/teams', { body: { name } })));
      const statuses = rs.map((r) => r.status).sort();
      assert.deepEqual(statuses, [201, ...Array(names.length - 1).fill(409)], JSON.stringify(rs.map((r) => r.json)));
      for (const r of rs.filter((x) => x.status === 409)) {
        assert.equal(r.json.error.code, 'CONFLICT');
        assert.match(r.json.error.message, /A team named .* exists/);
      }
      const key = base.normalize('NFC').toLowerCase();
      assert.equal((await teamNames(s)).filter((n) => n.normalize('NFC').toLowerCase() === key).length, 1);
    }
  });

  it('renamed at once to case variants of one name, one rename wins', async () => {
    const made = await Promise.all(['r1', 'r2', 'r3', 'r4'].map((name) => call(s, 'POST', '/api/v1/teams', { body: { name } })));
    const targets = ['Ops', 'OPS', 'ops', 'oPs'];
    const rs = await Promise.all(made.map((m, i) => call(s, 'PUT', `/api/v1/teams/${m.json.team.id}`, { body: { name: targets[i] } })));
    assert.deepEqual(rs.map((r) => r.status).sort(), [200, 409, 409, 409], JSON.stringify(rs.map((r) => r.json)));
    assert.equal((await teamNames(s)).filter((n) => n.toLowerCase() === 'ops').length, 1);
    // A team renamed to another case of its own name keeps it.
    const winner = rs.find((r) => r.status === 200)!.json.team;
    const self = await call(s, 'PUT', `/api/v1/teams/${winner.id}`, { body: { name: 'OPS' } });
    assert.equal(self.status, 200, JSON.stringify(self.json));
    assert.equal(self.json.team.name, 'OPS');
  });
});

describe('migration 0790', () => {
  it('keys the oldest of case variants made before it; a later variant of a keyed name is refused', async () => {
    const { db, to } = migrationDb();
    await to('0780_sso_link_unique');
    await db
      .insertInto('teams')
      .values([
        { id: 't1', name: 'SALES', created_at: 2 },
        { id: 't2', name: 'Sales', created_at: 1 },
        { id: 't3', name: 'Cafe\u0301', created_at: 3 },
        { id: 't4', name: 'caf\u00e9', created_at: 4 },
        { id: 't5', name: 'Ops', created_at: 5 },
      ])
      .execute();
    await to('0790_team_name_case');
    const rows = await db.selectFrom('teams').select(['id', 'name_key']).orderBy('id').execute();
    assert.deepEqual(rows, [
      { id: 't1', name_key: null },
      { id: 't2', name_key: 'sales' },
      { id: 't3', name_key: 'caf\u00e9' },
      { id: 't4', name_key: null },
      { id: 't5', name_key: 'ops' },
    ]);
    await assert.rejects(db.insertInto('teams').values({ id: 't6', name: 'OPS', name_key: 'ops', created_at: 6 }).execute(), /UNIQUE/);
    await db.destroy();
  });
});
