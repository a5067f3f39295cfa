/**
 * Issue #22 polish: the generated initial-admin-password file goes once the admin changes that
 * password, the weak-password message reads as English, and the permission table of docs/ACCOUNTS.md
 * names every permission the daemon knows.
 */
import assert from 'node:assert/strict';
import { access, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { PERMISSIONS } from '../../../daemon/auth/permissions.js';
import { REPO } from '../../helpers/cli.js';
import { login, startServer } from '../../helpers/server.js';
import { call, makeUser } from './http.js';

const exists = (p: string) =>
  access(p).then(
    () => true,
    () => false,
  );

describe('accounts polish', () => {
  it('initial-admin-password is removed when the admin changes that password, not when another user does', async () => {
    const s = await startServer({ generatePassword: true });
    try {
      const file = path.join(s.dataDir, 'initial-admin-password');
      const pw = (await readFile(file, 'utf8')).trim();
      const token = await login(s.url, 'admin', pw);
      const other = await makeUser({ ...s, token }, 'someone');
      const c1 = await call(s, 'POST', '/api/auth/change-password', {
        token: other.token,
        body: { currentPassword: other.password, newPassword: 'Fresh-Words-5566' },
      });
      assert.equal(c1.status, 200);
      assert.ok(await exists(file), "another user's change leaves the file");
      const c2 = await call(s, 'POST', '/api/auth/change-password', {
        token,
        body: { currentPassword: pw, newPassword: 'Chosen-Later-1234' },
      });
      assert.equal(c2.status, 200, JSON.stringify(c2.json));
      assert.equal(await exists(file), false, 'the stale password file is gone');
    } finally {
      await s.close();
    }
  });

  it('a weak password is told what it needs and what it must not contain, in plain words', async () => {
    const s = await startServer();
    try {
      const r = await call(s, 'POST', '/api/auth/users', { body: { username: 'petra', password: 'petra' } });
      assert.equal(r.status, 400);
      assert.equal(r.json.error.message, 'The password is too weak: it needs at least 10 characters; it must not contain the username.');
      const only = await call(s, 'POST', '/api/auth/users', { body: { username: 'petra', password: 'xx-petra-long-enough' } });
      assert.equal(only.json.error.message, 'The password is too weak: it must not contain the username.');
    } finally {
      await s.close();
    }
  });

  it('docs/ACCOUNTS.md lists every permission in its table', async () => {
    const doc = await readFile(path.join(REPO, 'docs', 'ACCOUNTS.md'), 'utf8');
    const table = doc.slice(doc.indexOf('| Permission |'), doc.indexOf('\n\n', doc.indexOf('| Permission |')));
    for (const p of PERMISSIONS) assert.ok(table.includes(`\`${p}\``), `${p} is missing from the permission table`);
  });
});
