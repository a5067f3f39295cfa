/**
 * Deleting a team or a user leaves nothing keyed by its id behind: a team takes its limits row with it
 * (and its former members, even through a cached API-key verification, get the server's limits at once);
 * a user takes the watch folders that ran as it and the quota room its unfinished uploads held. Runs on
 * PostgreSQL too when KILN_TEST_PG is set (test/helpers/server.ts).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { tempDir } from '../../helpers/fixtures.js';
import { filePart, form, startServer, type TestServer } from '../../helpers/server.js';
import { call, makeUser } from './http.js';

const dir = tempDir('kiln-leftovers-');

describe('what deletions leave behind', () => {
  let s: TestServer;
  let png: string;
  before(async () => {
    s = await startServer({ env: { MAX_UPLOAD_MB: '1' } });
    // Noise, about 1.5 MB: over the server's 1 MB upload limit, under the team's 2 MB.
    png = path.join(dir, 'noise.png');
    await sharp(randomBytes(720 * 720 * 3), { raw: { width: 720, height: 720, channels: 3 } })
      .png({ compressionLevel: 0 })
      .toFile(png);
  });
  after(() => s.close());

  const upload = async (token: string) =>
    call(s, 'POST', '/api/v1/tools/image/resize', { token, form: await form({ file: await filePart(png), settings: '{"width": 16}' }) });

  it("deletes a team's limits with the team; its former members get the server's limits at once", async () => {
    const db = s.app.kiln.store.db;
    const team = (await call(s, 'POST', '/api/v1/teams', { body: { name: 'render-farm' } })).json.team.id as string;
    const member = await makeUser(s, 'farmer');
    assert.equal((await call(s, 'PUT', `/api/auth/users/${member.id}`, { body: { team: team } })).status, 200);
    const key = (await call(s, 'POST', '/api/v1/api-keys', { token: member.token, body: { name: 'ci' } })).json.key as string;
    assert.equal((await call(s, 'PUT', `/api/v1/teams/${team}/limits`, { body: { maxUploadMb: 2 } })).status, 200);
    // The key's verification is cached now, with the member's team.
    const before = await upload(key);
    assert.equal(before.status, 200, JSON.stringify(before.json));

    assert.equal((await call(s, 'DELETE', `/api/v1/teams/${team}`)).status, 200);
    const rows = await db.selectFrom('app_settings').select('key').where('key', 'like', `%${team}%`).execute();
    assert.deepEqual(rows, [], 'no row keyed by the deleted team');
    assert.equal((await call(s, 'GET', `/api/v1/teams/${team}/limits`)).status, 404);
    const afterKey = await upload(key);
    assert.equal(afterKey.status, 413, `the API key follows the server's 1 MB now: ${JSON.stringify(afterKey.json)}`);
    assert.equal((await upload(member.token)).status, 413);
  });

  it('deletes the watch folders of a deleted user and the quota room its unfinished uploads held', async () => {
    const db = s.app.kiln.store.db;
    const u = await makeUser(s, 'watcher');
    const inDir = path.join(dir, 'watched');
    await mkdir(inDir);
    const folder = await call(s, 'POST', '/api/v1/admin/watch-folders', {
      body: {
        path: inDir,
        outputPath: path.join(dir, 'watched-out'),
        pipeline: { steps: [{ tool: 'resize', settings: { width: 8 } }] },
        ownerId: u.id,
      },
    });
    assert.equal(folder.status, 201, JSON.stringify(folder.json));
    // What an upload stopped mid-way (a crashed instance) leaves: room reserved against the owner's quota.
    await db
      .insertInto('quota_reservations')
      .values({ id: 'r-' + randomBytes(6).toString('hex'), owner_id: u.id, kind: 'library', bytes: 4096, created_at: Date.now() })
      .execute();

    const del = await call(s, 'DELETE', `/api/auth/users/${u.id}`);
    assert.equal(del.status, 200, JSON.stringify(del.json));
    assert.equal(del.json.watchFoldersDeleted, 1);
    assert.deepEqual(await db.selectFrom('watch_folders').select('id').where('owner_id', '=', u.id).execute(), []);
    assert.deepEqual(await db.selectFrom('quota_reservations').select('id').where('owner_id', '=', u.id).execute(), []);
    const listed = (await call(s, 'GET', '/api/v1/admin/watch-folders')).json.watchFolders as { id: string }[];
    assert.ok(!listed.some((f) => f.id === folder.json.id), 'the folder is no longer listed');
  });
});
