/**
 * The job queries every request runs: SQLite statements prepared once (statement-cache.ts), queries
 * compiled once per shape (compiled.ts) and never cached when their values would bind out of order, and
 * the one-statement finish (UPDATE … RETURNING), and the indexes that keep the per-request ones from
 * reading the whole jobs table.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import path from 'node:path';
import BetterSqlite from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { bumpCredentials, credentialsVersion } from '../../daemon/auth/credentials-version.js';
import { jobStorageUsed } from '../../daemon/http/quota.js';
import { runCompiled } from '../../daemon/store/compiled.js';
import { openStore } from '../../daemon/store/db.js';
import { claimJob, finishJob, finishJobRow, getJob, insertJob, listJobs, updateJob, type JobRow } from '../../daemon/store/jobs.js';
import type { Database } from '../../daemon/store/schema.js';
import { cachingDatabase } from '../../daemon/store/statement-cache.js';
import { tempDir } from '../helpers/fixtures.js';

function jobRow(id: string): JobRow {
  return {
    id,
    owner_id: 'u1',
    tool: 'resize',
    base_tool: 'resize',
    kind: 'run',
    settings: '{"width":10}',
    status: 'queued',
    progress: 0,
    stage: 'queued',
    result: null,
    error: null,
    client_job_id: null,
    instance_id: 'i1',
    work_dir: `/tmp/${id}`,
    output_path: null,
    output_name: null,
    content_type: null,
    original_size: 123,
    processed_size: null,
    created_at: 1000,
    started_at: null,
    finished_at: null,
  };
}

describe('statement cache', () => {
  it('hands back the statement prepared for the same SQL, evicts the least recently used past its bound', () => {
    const raw = new BetterSqlite(':memory:');
    let prepared = 0;
    const counting = {
      prepare(sql: string) {
        prepared++;
        return raw.prepare(sql);
      },
      close: () => raw.close(),
    };
    const db = cachingDatabase(counting, 2);
    const a = db.prepare('select 1 as v');
    assert.equal(db.prepare('select 1 as v'), a);
    db.prepare('select 2 as v');
    db.prepare('select 1 as v'); // most recent again: 'select 2' is the one to go
    db.prepare('select 3 as v');
    assert.equal(db.cachedStatements(), 2);
    assert.equal(prepared, 3);
    assert.equal(db.prepare('select 1 as v'), a);
    assert.notEqual(db.prepare('select 2 as v'), undefined);
    assert.equal(prepared, 4);
    assert.deepEqual(db.prepare('select 3 as v').all([]), [{ v: 3 }]);
    db.close();
    assert.equal(raw.open, false);
  });
});

describe('job queries', () => {
  it('insert, claim, progress, finish and read give the same rows on every call, finishing only once', async () => {
    const store = await openStore({ dataDir: tempDir('kiln-stmt-') });
    try {
      for (const id of ['a'.repeat(24), 'b'.repeat(24)]) {
        await insertJob(store.db, jobRow(id));
        assert.equal((await getJob(store.db, id))?.status, 'queued');
        assert.equal(await claimJob(store.db, id, 'i2', 2000), true);
        assert.equal(await claimJob(store.db, id, 'i2', 2001), false, 'a running job is not claimed twice');
        await updateJob(store.db, id, { progress: 40, stage: 'resizing' });
        const running = await getJob(store.db, id);
        assert.deepEqual([running?.status, running?.progress, running?.stage, running?.instance_id], ['running', 40, 'resizing', 'i2']);
        const done = await finishJobRow(store.db, id, {
          status: 'completed',
          progress: 100,
          stage: 'done',
          output_name: 'x.jpg',
          finished_at: 3000,
        });
        assert.deepEqual(done, await getJob(store.db, id));
        assert.deepEqual(
          [done?.status, done?.output_name, Number(done?.started_at), Number(done?.original_size)],
          ['completed', 'x.jpg', 2000, 123],
        );
        assert.equal(await finishJobRow(store.db, id, { status: 'failed', finished_at: 4000 }), undefined);
        assert.equal(await finishJob(store.db, id, { status: 'cancelled' }), false);
        assert.equal((await getJob(store.db, id))?.status, 'completed');
      }
      assert.equal(await getJob(store.db, 'c'.repeat(24)), undefined);
    } finally {
      await store.close();
    }
  });

  it('compiles a shape once, and never caches one whose listed values differ from what it binds', async () => {
    const store = await openStore({ dataDir: tempDir('kiln-stmt-') });
    try {
      const id = 'd'.repeat(24);
      await insertJob(store.db, jobRow(id));
      let builds = 0;
      const build = () => {
        builds++;
        return store.db.selectFrom('jobs').select('tool').where('id', '=', id).where('progress', '=', 0);
      };
      for (let i = 0; i < 3; i++) assert.deepEqual((await runCompiled(store.db, 'test:ok', [id, 0], build)).rows, [{ tool: 'resize' }]);
      assert.equal(builds, 1);
      // Listed in the wrong order: the cached text would bind id to progress. It runs as built, every time.
      builds = 0;
      for (let i = 0; i < 3; i++)
        assert.deepEqual((await runCompiled(store.db, 'test:swapped', [0, id], build)).rows, [{ tool: 'resize' }]);
      assert.equal(builds, 3);
    } finally {
      await store.close();
    }
  });

  it("builds the quota's and the credentials' readings once per database, and each call reads the rows as they are now", async () => {
    const store = await openStore({ dataDir: tempDir('kiln-stmt-') });
    try {
      // Every query built goes through selectFrom: counted on a view of the same database.
      let built = 0;
      const db = new Proxy(store.db, {
        get(target, key, receiver) {
          const v = Reflect.get(target, key, receiver);
          if (key !== 'selectFrom' || typeof v !== 'function') return typeof v === 'function' ? v.bind(target) : v;
          return (...args: unknown[]) => {
            built++;
            return v.apply(target, args);
          };
        },
      });
      const work = tempDir('kiln-stmt-work-');
      writeFileSync(path.join(work, 'input.bin'), Buffer.alloc(5000));
      const id = 'e'.repeat(24);
      await insertJob(store.db, { ...jobRow(id), status: 'running', work_dir: work });
      const before = await credentialsVersion(db);
      assert.equal(await jobStorageUsed(db, 'u1'), 5000, 'the running job measured in its directory');
      assert.equal(built, 3, 'built on first use');
      await bumpCredentials(store.db);
      await finishJobRow(store.db, id, { status: 'completed', output_path: '/x', processed_size: 700, finished_at: 2000 });
      assert.equal(await credentialsVersion(db), before + 1);
      assert.equal(await jobStorageUsed(db, 'u1'), 700, 'the ended job counted by its recorded output');
      assert.equal(await jobStorageUsed(db, 'u2'), 0);
      assert.equal(built, 3, 'later calls send the compiled text');
    } finally {
      await store.close();
    }
  });
});

describe('job list order', () => {
  it('pages jobs of one millisecond by id: no page repeats or skips one', async () => {
    const store = await openStore({ dataDir: tempDir('kiln-ties-') });
    try {
      // Inserted out of id order, all at one instant: the order of ties was the database's own (rowid).
      const ids = ['j-c', 'j-a', 'j-e', 'j-b', 'j-d'];
      for (const id of ids) await insertJob(store.db, { ...jobRow(id), created_at: 1_700_000_000_000 });
      await insertJob(store.db, { ...jobRow('j-newest'), created_at: 1_700_000_000_001 });
      const pages: string[][] = [];
      for (let offset = 0; offset < 6; offset += 2) pages.push((await listJobs(store.db, { limit: 2, offset })).map((r) => r.id));
      assert.deepEqual(pages, [
        ['j-newest', 'j-e'],
        ['j-d', 'j-c'],
        ['j-b', 'j-a'],
      ]);
    } finally {
      await store.close();
    }
  });
});

describe('job indexes', () => {
  it("reads the admin's newest jobs and a user's quota from indexes, not by scanning the table", async () => {
    const dataDir = tempDir('kiln-plan-');
    await (await openStore({ dataDir })).close();
    // The statements the daemon's own functions send, planned by SQLite on the migrated schema.
    const raw = new BetterSqlite(path.join(dataDir, 'kiln.db'));
    const sent: string[] = [];
    const db = new Kysely<Database>({
      dialect: new SqliteDialect({
        database: {
          prepare(sql: string) {
            sent.push(sql);
            return raw.prepare(sql);
          },
          close: () => raw.close(),
        },
      }),
    });
    try {
      const plan = async (run: () => Promise<unknown>) => {
        sent.length = 0;
        await run();
        return sent.map((sql) => {
          const holes = sql.split('?').length - 1;
          const rows = raw.prepare(`explain query plan ${sql}`).all(...Array(holes).fill(null)) as { detail: string }[];
          return rows.map((r) => r.detail).join('; ');
        });
      };
      const [list] = await plan(() => listJobs(db, { limit: 20, offset: 0 }));
      assert.match(list!, /jobs_created_id/);
      assert.doesNotMatch(list!, /TEMP B-TREE/);
      const [held, open] = await plan(() => jobStorageUsed(db, 'u1'));
      // What ended jobs hold: one primary-key row (migration 0800), not a sum over the user's outputs.
      assert.match(held!, /SEARCH job_held_bytes USING INDEX sqlite_autoindex_job_held_bytes_1 \(owner_id=\?\)/);
      assert.match(open!, /jobs_owner_status \(owner_id=\? AND status=\?\)/);
    } finally {
      await db.destroy();
    }
  });
});
