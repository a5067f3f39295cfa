/**
 * Migration 0720_sharing on a database made before it: existing library items and pipelines become
 * `private` (nothing is shared by an upgrade), and its down step removes the columns again.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { migrationDb } from '../../helpers/migration-db.js';

it('makes items and pipelines saved before sharing private, and rolls back', async () => {
  const { db, to } = migrationDb();
  try {
    await to('0600_hardening');
    const now = Date.now();
    await db
      .insertInto('library_items')
      .values({
        id: 'i1',
        owner_id: 'u1',
        name: 'a.png',
        content_type: 'image/png',
        size: 1,
        latest_version: 1,
        created_at: now,
        updated_at: now,
      })
      .execute();
    await db
      .insertInto('pipelines')
      .values({ id: 'p1', owner_id: 'u1', name: 'p', description: null, definition: '{"steps":[]}', created_at: now, updated_at: now })
      .execute();
    await to('0720_sharing');
    assert.deepEqual(await db.selectFrom('library_items').select(['id', 'scope']).execute(), [{ id: 'i1', scope: 'private' }]);
    assert.deepEqual(await db.selectFrom('pipelines').select(['id', 'scope']).execute(), [{ id: 'p1', scope: 'private' }]);
    await to('0600_hardening');
    const cols = (await db.introspection.getTables()).find((t) => t.name === 'library_items')!.columns.map((c) => c.name);
    assert.ok(!cols.includes('scope'), cols.join(', '));
  } finally {
    await db.destroy();
  }
});
