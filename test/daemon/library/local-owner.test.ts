/**
 * The local CLI stores library items in a data dir before any daemon made an admin: they belong to
 * LOCAL_OWNER, which has no user row. Neither the commit check of #21.9 (a deleted user's upload is
 * refused) nor the orphan sweep may take them for a deleted user's work.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { deleteOrphans } from '../../../daemon/accounts/users.js';
import { LibraryService } from '../../../daemon/library/service.js';
import { openStore } from '../../../daemon/store/db.js';
import { LOCAL_OWNER } from '../../../daemon/store/users.js';
import { tempDir } from '../../helpers/fixtures.js';

describe('library items of the local owner', () => {
  it('are stored without a user row and survive the orphan sweep; an unknown owner is refused', async () => {
    const dataDir = tempDir();
    const store = await openStore({ dataDir });
    try {
      const lib = new LibraryService(store.db, dataDir, 0);
      const file = (name: string) => {
        const p = path.join(dataDir, name);
        writeFileSync(p, `notes of ${name}\n`);
        return p;
      };
      const item = await lib.create({ id: LOCAL_OWNER, role: 'admin' }, { path: file('a.txt'), name: 'a.txt' });
      await assert.rejects(lib.create({ id: 'gone-user', role: 'user' }, { path: file('b.txt'), name: 'b.txt' }), {
        code: 'UNAUTHORIZED',
      });
      const swept = await deleteOrphans(store.db, dataDir);
      assert.equal(swept.files, 0);
      const left = await store.db.selectFrom('library_items').select(['id', 'owner_id']).execute();
      assert.deepEqual(left, [{ id: item.id, owner_id: LOCAL_OWNER }]);
    } finally {
      await store.close();
    }
  });
});
