/**
 * Names people read in lists (teams, API keys): one name whatever its letter case or Unicode form, and
 * none that reads as another (direction overrides, invisible characters).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../../helpers/server.js';
import { call, makeUser } from './http.js';

describe('team and API key names', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(() => s.close());

  it('a team name differing only in case or Unicode form is taken; a user is assigned by it in any form', async () => {
    const design = await call(s, 'POST', '/api/v1/teams', { body: { name: 'Design' } });
    assert.equal(design.status, 201);
    const lower = await call(s, 'POST', '/api/v1/teams', { body: { name: 'design' } });
    assert.equal(lower.status, 409, JSON.stringify(lower.json));
    assert.match(lower.json.error.message, /A team named Design exists \(names differing only in case are one name\)/);
    // "Café" with a combining accent (as macOS file names and some keyboards give it) and precomposed.
    const nfd = await call(s, 'POST', '/api/v1/teams', { body: { name: 'Cafe\u0301' } });
    assert.equal(nfd.status, 201);
    assert.equal(nfd.json.team.name, 'Caf\u00e9', 'stored in NFC');
    assert.equal((await call(s, 'POST', '/api/v1/teams', { body: { name: 'CAF\u00c9' } })).status, 409);
    const other = await call(s, 'POST', '/api/v1/teams', { body: { name: 'Other' } });
    assert.equal((await call(s, 'PUT', `/api/v1/teams/${other.json.team.id}`, { body: { name: 'DESIGN' } })).status, 409);
    assert.equal((await call(s, 'PUT', `/api/v1/teams/${design.json.team.id}`, { body: { name: 'DESIGN' } })).status, 200, 'its own case');

    const u = await makeUser(s, 'nina');
    const byCase = await call(s, 'PUT', `/api/auth/users/${u.id}`, { body: { team: 'design' } });
    assert.equal(byCase.status, 200, JSON.stringify(byCase.json));
    assert.equal(byCase.json.user.team.id, design.json.team.id);
    const byForm = await call(s, 'PUT', `/api/auth/users/${u.id}`, { body: { team: 'cafe\u0301' } });
    assert.equal(byForm.status, 200, JSON.stringify(byForm.json));
    assert.equal(byForm.json.user.team.id, nfd.json.team.id);
  });

  it('case variants made before names were compared this way: the exact name wins, a name matching only several is ambiguous', async () => {
    const db = s.app.kiln.store.db;
    await db
      .insertInto('teams')
      .values([
        { id: 'old-a', name: 'Sales', created_at: 1 },
        { id: 'old-b', name: 'SALES', created_at: 2 },
      ])
      .execute();
    const u = await makeUser(s, 'otto');
    const exact = await call(s, 'PUT', `/api/auth/users/${u.id}`, { body: { team: 'SALES' } });
    assert.equal(exact.json.user.team.id, 'old-b');
    const vague = await call(s, 'PUT', `/api/auth/users/${u.id}`, { body: { team: 'sales' } });
    assert.equal(vague.status, 409);
    assert.match(vague.json.error.message, /give the team's id/);
  });

  it('direction overrides and invisible characters are refused in team and API key names', async () => {
    for (const name of ['abc\u202edef', 'Des\u200bign', '\u2066Ops\u2069', 'Op\ufeffs']) {
      const t = await call(s, 'POST', '/api/v1/teams', { body: { name } });
      assert.equal(t.status, 400, `team ${JSON.stringify(name)}`);
      assert.equal(t.json.error.details[0].path, 'name');
      const k = await call(s, 'POST', '/api/v1/api-keys', { body: { name } });
      assert.equal(k.status, 400, `key ${JSON.stringify(name)}`);
    }
    // Joiners stay: emoji sequences and scripts need them.
    const family = await call(s, 'POST', '/api/v1/api-keys', { body: { name: 'family \u{1f468}\u200d\u{1f469}\u200d\u{1f467}' } });
    assert.equal(family.status, 201, JSON.stringify(family.json));
  });
});
