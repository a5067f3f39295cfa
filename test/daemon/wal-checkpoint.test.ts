/**
 * SQLite's write-ahead log checkpointed at quiet moments (daemon/store/db.ts checkpoint(), which the
 * daemon calls once its jobs pause): the log is in the database file before the next burst of requests,
 * so SQLite's own checkpoint, with its two file syncs on the event loop, does not fall inside one. Read
 * from the wal-index (`kiln.db-shm`, laid out in https://www.sqlite.org/walformat.html): mxFrame, the
 * frames the log holds, and nBackfill, those already copied into the database.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { SQLITE_FILE, openStore } from '../../daemon/store/db.js';
import { insertJob } from '../../daemon/store/jobs.js';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { jobRow } from '../helpers/job-row.js';
import { api, filePart, form, startServer } from '../helpers/server.js';

/** The wal-index header's frame counts (in the machine's byte order, as SQLite writes them). */
function walState(dataDir: string): { frames: number; backfilled: number } {
  const shm = readFileSync(path.join(dataDir, `${SQLITE_FILE}-shm`));
  const u32 = (offset: number) => (os.endianness() === 'LE' ? shm.readUInt32LE(offset) : shm.readUInt32BE(offset));
  return { frames: u32(16), backfilled: u32(96) };
}

describe('write-ahead log checkpoints', () => {
  it('checkpoint() copies the whole log into the database', async () => {
    const dir = tempDir('kiln-wal-');
    const store = await openStore({ dataDir: dir });
    try {
      // An empty log first (what the migrations wrote goes in), then one job's writes after it.
      store.checkpoint();
      await insertJob(store.db, jobRow('wal-owner'));
      const before = walState(dir);
      assert.ok(before.frames > 0 && before.backfilled < before.frames, `before: ${JSON.stringify(before)}`);
      store.checkpoint();
      const after = walState(dir);
      assert.equal(after.frames, before.frames, 'the log keeps its frames until the next write restarts it');
      assert.equal(after.backfilled, after.frames, `after: ${JSON.stringify(after)}`);
    } finally {
      await store.close();
    }
  });

  it('the daemon checkpoints once its jobs have paused for HEAP_TRIM_MS', async (t) => {
    const s = await startServer({ env: { HEAP_TRIM_MS: '200' } });
    try {
      if (s.app.kiln.store.kind !== 'sqlite') return t.skip('SQLite only (PostgreSQL checkpoints on its own)');
      const image = await makeImage(tempDir('kiln-wal-img-'), 'in.png', 40, 30);
      const r = await api(
        s,
        s.token,
        'POST',
        '/api/v1/tools/image/resize',
        await form({ file: await filePart(image), settings: '{"width":20}' }),
      );
      assert.equal(r.status, 200, r.text);
      // Far fewer than SQLite's own 1000 frames were written since start-up: only the quiet moment copies them.
      const deadline = Date.now() + 15_000;
      let state = walState(s.dataDir);
      while (state.backfilled < state.frames && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
        state = walState(s.dataDir);
      }
      assert.ok(state.frames > 0 && state.frames < 1000, JSON.stringify(state));
      assert.equal(state.backfilled, state.frames, JSON.stringify(state));
    } finally {
      await s.close();
    }
  });
});
