/**
 * Readiness and admin diagnostics see every directory the daemon writes to: a data dir that cannot be
 * written (read-only mount, lost permissions) makes readyz 503 though statfs still reports free space,
 * and admin/health names the directory and its free space.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, writeFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { startServer } from '../helpers/server.js';

/** Makes `dir` unwritable (chmod for a user, chattr +i for root); undefined when this machine cannot. */
function lockDir(dir: string): (() => void) | undefined {
  chmodSync(dir, 0o500);
  let unlock = () => chmodSync(dir, 0o700);
  if (process.getuid?.() === 0) {
    try {
      execFileSync('chattr', ['+i', dir], { stdio: 'ignore' });
      const chmodBack = unlock;
      unlock = () => {
        execFileSync('chattr', ['-i', dir], { stdio: 'ignore' });
        chmodBack();
      };
    } catch {}
  }
  const probe = path.join(dir, 'probe');
  try {
    writeFileSync(probe, '');
    rmSync(probe);
    unlock();
    return undefined;
  } catch {
    return unlock;
  }
}

describe('health: directories', () => {
  it('admin/health reports free space and writability of the data and temp dirs', async () => {
    const s = await startServer();
    try {
      const admin = await (await fetch(`${s.url}/api/v1/admin/health`, { headers: { authorization: `Bearer ${s.token}` } })).json();
      const { data, tmp } = admin.storage.dirs;
      assert.equal(data.path, s.config.dataDir);
      assert.equal(data.writable, true);
      assert.equal(typeof data.freeBytes, 'number');
      assert.ok(data.freeBytes > 0 && data.totalBytes >= data.freeBytes);
      assert.equal(tmp.writable, true);
      assert.equal(typeof tmp.freeBytes, 'number');
      assert.equal(admin.storage.ok, true);
      assert.equal(admin.status, 'healthy');
    } finally {
      await s.close();
    }
  });

  it('readyz is 503 while the data dir is not writable, and ready again after', async (t) => {
    const s = await startServer();
    try {
      const unlock = lockDir(s.config.dataDir);
      if (!unlock) return t.skip('cannot make a directory unwritable here');
      try {
        const ready = await fetch(`${s.url}/api/v1/readyz`);
        assert.equal(ready.status, 503);
        const body = await ready.json();
        assert.equal(body.status, 'not-ready');
        assert.equal(body.checks.disk.ok, false);
        assert.doesNotMatch(JSON.stringify(body), new RegExp(s.config.dataDir), 'public readiness names no path');
        const admin = await (await fetch(`${s.url}/api/v1/admin/health`, { headers: { authorization: `Bearer ${s.token}` } })).json();
        assert.equal(admin.status, 'unhealthy');
        assert.equal(admin.storage.ok, false);
        assert.equal(admin.storage.dirs.data.writable, false);
        assert.match(admin.storage.error, /^data directory: not writable/);
      } finally {
        unlock();
      }
      assert.equal((await fetch(`${s.url}/api/v1/readyz`)).status, 200);
    } finally {
      await s.close();
    }
  });

  it('readyz is 503 when the temp dir for runs is not writable; a missing one is made', async (t) => {
    const s = await startServer();
    const before = process.env.KILN_TMP_DIR;
    const tmp = path.join(s.dataDir, 'runs-tmp');
    process.env.KILN_TMP_DIR = tmp;
    try {
      assert.equal((await fetch(`${s.url}/api/v1/readyz`)).status, 200, 'a missing temp dir is created, as runs do');
      const unlock = lockDir(tmp);
      if (!unlock) return t.skip('cannot make a directory unwritable here');
      try {
        assert.equal((await fetch(`${s.url}/api/v1/readyz`)).status, 503);
        const admin = await (await fetch(`${s.url}/api/v1/admin/health`, { headers: { authorization: `Bearer ${s.token}` } })).json();
        assert.equal(admin.storage.dirs.tmp.path, tmp);
        assert.equal(admin.storage.dirs.tmp.ok, false);
        assert.match(admin.storage.error, /^tmp directory: not writable/);
      } finally {
        unlock();
      }
    } finally {
      if (before === undefined) delete process.env.KILN_TMP_DIR;
      else process.env.KILN_TMP_DIR = before;
      await s.close();
    }
  });

  it('MIN_FREE_DISK_MB sets the free space readyz asks for (0: never low)', async () => {
    // More than any disk here holds: every directory is low on space.
    const s = await startServer({ env: { MIN_FREE_DISK_MB: String(1024 ** 3) } });
    try {
      const ready = await fetch(`${s.url}/api/v1/readyz`);
      assert.equal(ready.status, 503);
      const admin = await (await fetch(`${s.url}/api/v1/admin/health`, { headers: { authorization: `Bearer ${s.token}` } })).json();
      assert.equal(admin.storage.dirs.data.writable, true);
      assert.match(admin.storage.error, /^data directory: low disk space/);
    } finally {
      await s.close();
    }
    const none = await startServer({ env: { MIN_FREE_DISK_MB: '0' } });
    try {
      assert.equal((await fetch(`${none.url}/api/v1/readyz`)).status, 200);
    } finally {
      await none.close();
    }
  });
});
