/**
 * Watch folders configured by an admin: every complete file runs the folder's pipeline as a job of its
 * owner, outputs land in the output folder, originals in .done/ or .failed/ (with the error beside
 * them). With two instances on PostgreSQL and Redis, one instance watches a folder and each file is
 * processed once; when it stops, the other takes the folder over.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { copyFile, mkdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { deliverInto } from '../../daemon/watch/service.js';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { makeVideo } from '../helpers/media.js';
import { pgSchema, TEST_PG_URL, TEST_REDIS_URL, unavailable } from '../helpers/scale.js';
import { api, login, startServer, type TestServer } from '../helpers/server.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Files (not folders, not hidden) directly in `dir`. */
const visible = (dir: string) =>
  existsSync(dir)
    ? readdirSync(dir, { withFileTypes: true })
        .filter((e) => e.isFile() && !e.name.startsWith('.'))
        .map((e) => e.name)
    : [];

async function waitFor(what: string, ok: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

const resizeTo30 = { name: 'thumbs', steps: [{ tool: 'resize', settings: { width: 30 } }] };

describe('watch folders on the daemon', () => {
  let s: TestServer;
  // Registered before tempDir's removal, so it runs first (node:test runs `after` hooks in order): a
  // watcher still moving an original into .done/ made the removal fail with ENOTEMPTY under load.
  after(() => s?.close());
  const dir = tempDir('kiln-wf-');
  before(async () => {
    s = await startServer();
  });

  it('refuses bad configurations and non-admins', async () => {
    const inDir = path.join(dir, 'bad-in');
    await mkdir(inDir);
    const inside = await api(s, s.token, 'POST', '/api/v1/admin/watch-folders', {
      path: inDir,
      outputPath: path.join(inDir, 'out'),
      pipeline: resizeTo30,
    });
    assert.equal(inside.status, 400);
    // An output folder that is a link into the watched one is inside it too (outputs fed back in).
    await symlink(inDir, path.join(dir, 'bad-link'));
    const linked = await api(s, s.token, 'POST', '/api/v1/admin/watch-folders', {
      path: inDir,
      outputPath: path.join(dir, 'bad-link', 'out'),
      pipeline: resizeTo30,
      recursive: true,
    });
    assert.equal(linked.status, 400, JSON.stringify(linked.body));
    assert.match(linked.body.error.message, /inside the watched folder/);
    const missing = await api(s, s.token, 'POST', '/api/v1/admin/watch-folders', {
      path: path.join(dir, 'nope'),
      outputPath: path.join(dir, 'o'),
      pipeline: resizeTo30,
    });
    assert.equal(missing.status, 400);
    const badTool = await api(s, s.token, 'POST', '/api/v1/admin/watch-folders', {
      path: inDir,
      outputPath: path.join(dir, 'o'),
      pipeline: { steps: [{ tool: 'no-such-tool' }] },
    });
    assert.equal(badTool.status, 400);
    // Each job gets one file: a pipeline taking none or several failed every file that arrived.
    for (const steps of [[{ tool: 'qr-generate', settings: { data: 'hi' } }], [{ tool: 'merge-pdf' }]]) {
      const r = await api(s, s.token, 'POST', '/api/v1/admin/watch-folders', {
        path: inDir,
        outputPath: path.join(dir, 'o'),
        pipeline: { steps },
      });
      assert.equal(r.status, 400, r.text);
      assert.equal(r.body.error.code, 'VALIDATION_ERROR');
    }
    await api(s, s.token, 'POST', '/api/auth/register', { username: 'wf-user', password: 'Correct-Horse-42', role: 'user' });
    const user = await login(s.url, 'wf-user', 'Correct-Horse-42');
    assert.equal((await api(s, user, 'GET', '/api/v1/admin/watch-folders')).status, 403);
    assert.equal(
      (await api(s, user, 'POST', '/api/v1/admin/watch-folders', { path: inDir, outputPath: path.join(dir, 'o'), pipeline: resizeTo30 }))
        .status,
      403,
    );
  });

  it("keeps a pipeline's passwords encrypted at rest, redacted in views, and runs with them", async () => {
    const inDir = path.join(dir, 'secret-in');
    const outDir = path.join(dir, 'secret-out');
    await mkdir(inDir);
    const created = await api(s, s.token, 'POST', '/api/v1/admin/watch-folders', {
      path: inDir,
      outputPath: outDir,
      pipeline: { name: 'lock', steps: [{ tool: 'protect-pdf', settings: { userPassword: 'hunter2-secret' } }] },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.pipeline.steps[0].settings.userPassword, '[redacted]');
    const row = await s.app.kiln.store.db
      .selectFrom('watch_folders')
      .select('pipeline')
      .where('id', '=', created.body.id)
      .executeTakeFirstOrThrow();
    assert.ok(!row.pipeline.includes('hunter2-secret'), 'the password is not stored in clear');
    const { PDFDocument } = await import('@cantoo/pdf-lib');
    const doc = await PDFDocument.create();
    doc.addPage([200, 200]);
    await writeFile(path.join(inDir, 'plain.pdf'), await doc.save());
    await waitFor('the protected output', () => visible(outDir).length > 0, 60_000);
    const out = path.join(outDir, visible(outDir)[0]!);
    const { exec } = await import('../../src/core/process.js');
    await exec('qpdf', ['--check', '--password=hunter2-secret', out]);
    await assert.rejects(exec('qpdf', ['--check', out]), 'without the password the output does not open');
    assert.equal((await api(s, s.token, 'DELETE', `/api/v1/admin/watch-folders/${created.body.id}`)).status, 204);
  });

  it('a deleted folder shows why it stopped, and is watched again once it is back', async () => {
    const inDir = path.join(dir, 'vanishing');
    const outDir = path.join(dir, 'vanishing-out');
    await mkdir(inDir);
    const created = await api(s, s.token, 'POST', '/api/v1/admin/watch-folders', {
      path: inDir,
      outputPath: outDir,
      // A name of its own: the next test counts the thumbs jobs.
      pipeline: { ...resizeTo30, name: 'vanishing' },
      stableMs: 300,
    });
    assert.equal(created.status, 201, created.text);
    const status = async () => (await api(s, s.token, 'GET', `/api/v1/admin/watch-folders/${created.body.id}`)).body.status;
    await waitFor('the folder watched', async () => (await status()).active);
    await rm(inDir, { recursive: true });
    // It stayed "active", failing its scan every second.
    await waitFor('the folder stopped', async () => !(await status()).active);
    assert.match((await status()).lastError, /is gone/);
    await mkdir(inDir);
    await makeImage(inDir, 'back.png', 60, 60);
    await waitFor('the output of a file in the folder made again', () => existsSync(path.join(outDir, 'back.png')));
    assert.equal((await status()).lastError, undefined);
    assert.equal((await api(s, s.token, 'DELETE', `/api/v1/admin/watch-folders/${created.body.id}`)).status, 204);
  });

  it('processes arriving files as jobs; failures go to .failed/ with their error', async () => {
    const inDir = path.join(dir, 'in');
    const outDir = path.join(dir, 'out');
    await mkdir(path.join(inDir, 'sub'), { recursive: true });
    const created = await api(s, s.token, 'POST', '/api/v1/admin/watch-folders', {
      path: inDir,
      outputPath: outDir,
      pipeline: resizeTo30,
      recursive: true,
      stableMs: 300,
    });
    assert.equal(created.status, 201, created.text);
    const id = created.body.id;
    await makeImage(inDir, 'a.png', 120, 60);
    await makeImage(path.join(inDir, 'sub'), 'b.jpg', 90, 90);
    await writeFile(path.join(inDir, 'broken.png'), 'not an image');
    await waitFor('three files handled', () => visible(inDir).length === 0 && visible(path.join(inDir, 'sub')).length === 0);
    await waitFor('outputs', () => existsSync(path.join(outDir, 'a.png')) && existsSync(path.join(outDir, 'sub', 'b.jpg')));
    assert.equal((await sharp(path.join(outDir, 'a.png')).metadata()).width, 30);
    assert.equal((await sharp(path.join(outDir, 'sub', 'b.jpg')).metadata()).width, 30);
    assert.ok(existsSync(path.join(inDir, '.done', 'a.png')));
    assert.ok(existsSync(path.join(inDir, '.done', 'sub', 'b.jpg')));
    const error = JSON.parse(await readFile(path.join(inDir, '.failed', 'broken.png.error.json'), 'utf8'));
    assert.equal(error.error.code, 'UNSUPPORTED_INPUT');
    const jobs = (await api(s, s.token, 'GET', '/api/v1/jobs')).body.jobs as { tool: string; status: string }[];
    const mine = jobs.filter((j) => j.tool === 'pipeline:thumbs');
    assert.equal(mine.filter((j) => j.status === 'completed').length, 2);
    assert.equal(mine.filter((j) => j.status === 'failed').length, 1);
    const listed = await api(s, s.token, 'GET', `/api/v1/admin/watch-folders/${id}`);
    assert.deepEqual([listed.body.status.active, listed.body.status.processed, listed.body.status.failed], [true, 2, 1]);
    assert.equal(
      (await api(s, s.token, 'POST', '/api/v1/admin/watch-folders', { path: inDir, outputPath: outDir, pipeline: resizeTo30 })).status,
      409,
    );
    // A sub-folder of a folder watched recursively: two watchers ran each of its files.
    const nested = await api(s, s.token, 'POST', '/api/v1/admin/watch-folders', {
      path: path.join(inDir, 'sub'),
      outputPath: path.join(dir, 'out2'),
      pipeline: resizeTo30,
    });
    assert.equal(nested.status, 409, nested.text);

    assert.equal((await api(s, s.token, 'DELETE', `/api/v1/admin/watch-folders/${id}`)).status, 204);
    await makeImage(inDir, 'late.png', 50, 50);
    await sleep(1500);
    assert.deepEqual(visible(inDir), ['late.png'], 'a deleted folder is no longer watched');
  });

  it('an output that cannot be written sends the original to .failed/ with why', async () => {
    const inDir = path.join(dir, 'nowhere-in');
    const outDir = path.join(dir, 'nowhere-out');
    await mkdir(inDir);
    const created = await api(s, s.token, 'POST', '/api/v1/admin/watch-folders', {
      path: inDir,
      outputPath: outDir,
      pipeline: resizeTo30,
      stableMs: 200,
    });
    assert.equal(created.status, 201, created.text);
    // The output folder removed, and a file made where it was.
    await rm(outDir, { recursive: true });
    await writeFile(outDir, 'in the way');
    await makeImage(inDir, 'a.png', 60, 60);
    // It stayed in the folder, reported once and never again, counted nowhere.
    await waitFor('the original moved to .failed/', () => existsSync(path.join(inDir, '.failed', 'a.png.error.json')));
    const error = JSON.parse(await readFile(path.join(inDir, '.failed', 'a.png.error.json'), 'utf8'));
    assert.equal(error.error.code, 'UNAVAILABLE');
    assert.match(error.error.message, /could not be written to/);
    const status = (await api(s, s.token, 'GET', `/api/v1/admin/watch-folders/${created.body.id}`)).body.status;
    assert.deepEqual([status.processed, status.failed], [0, 1]);
    assert.equal((await api(s, s.token, 'DELETE', `/api/v1/admin/watch-folders/${created.body.id}`)).status, 204);
  });

  it('deleting a folder while its file runs cancels the job at once; the original stays', async () => {
    const inDir = path.join(dir, 'slow-in');
    const outDir = path.join(dir, 'slow-out');
    await mkdir(inDir);
    const created = await api(s, s.token, 'POST', '/api/v1/admin/watch-folders', {
      path: inDir,
      outputPath: outDir,
      pipeline: { name: 'slow', steps: [{ tool: 'convert-video', settings: { format: 'webm' } }] },
      stableMs: 200,
    });
    assert.equal(created.status, 201, created.text);
    makeVideo(dir, 'long.mp4', { width: 640, height: 360, durationS: 30, audio: false });
    await rename(path.join(dir, 'long.mp4'), path.join(inDir, 'long.mp4'));
    const job = async () =>
      ((await api(s, s.token, 'GET', '/api/v1/jobs')).body.jobs as { tool: string; status: string }[]).find(
        (j) => j.tool === 'pipeline:slow',
      );
    await waitFor('the job running', async () => (await job())?.status === 'running');
    const t0 = Date.now();
    assert.equal((await api(s, s.token, 'DELETE', `/api/v1/admin/watch-folders/${created.body.id}`)).status, 204);
    // It waited for the job (up to 30 s), which then ran on with no one to deliver its output.
    assert.ok(Date.now() - t0 < 5000, `DELETE took ${Date.now() - t0} ms`);
    assert.equal((await job())?.status, 'cancelled');
    assert.deepEqual(visible(inDir), ['long.mp4']);
    assert.deepEqual(visible(outDir), []);
  });

  it("a disabled owner's folder pauses: files wait in place, none runs as that account, and resume on re-enabling", async () => {
    const inDir = path.join(dir, 'owner-in');
    const outDir = path.join(dir, 'owner-out');
    await mkdir(inDir);
    const reg = await api(s, s.token, 'POST', '/api/auth/register', { username: 'wanda', password: 'Correct-Horse-42' });
    assert.equal(reg.status, 201, reg.text);
    const owner = reg.body.user.id as string;
    const created = await api(s, s.token, 'POST', '/api/v1/admin/watch-folders', {
      path: inDir,
      outputPath: outDir,
      pipeline: resizeTo30,
      ownerId: owner,
      stableMs: 200,
    });
    assert.equal(created.status, 201, created.text);
    await makeImage(inDir, 'before.png', 60, 60);
    await waitFor('the first file done', () => existsSync(path.join(outDir, 'before.png')));

    assert.equal((await api(s, s.token, 'PUT', `/api/auth/users/${owner}`, { disabled: true })).status, 200);
    await makeImage(inDir, 'while-disabled.png', 60, 60);
    await sleep(2500);
    // It ran as the disabled account: a job of wanda's, its output delivered, the original moved to .done/.
    assert.deepEqual(visible(inDir), ['while-disabled.png'], 'the file waits in place');
    assert.ok(!existsSync(path.join(outDir, 'while-disabled.png')), 'no output made for a disabled owner');
    await waitFor('the folder shown paused', async () => {
      const st = (await api(s, s.token, 'GET', `/api/v1/admin/watch-folders/${created.body.id}`)).body.status;
      return st.active === false && /disabled/.test(st.lastError ?? '');
    });
    // A folder for a disabled account is refused up front (it would never run).
    const refused = await api(s, s.token, 'POST', '/api/v1/admin/watch-folders', {
      path: path.join(dir, 'bad-in'),
      outputPath: path.join(dir, 'owner-out2'),
      pipeline: resizeTo30,
      ownerId: owner,
    });
    assert.equal(refused.status, 409, refused.text);
    assert.equal(refused.body.error.reason, 'owner-disabled');

    assert.equal((await api(s, s.token, 'PUT', `/api/auth/users/${owner}`, { disabled: false })).status, 200);
    await waitFor('the waiting file processed once the owner is back', () => existsSync(path.join(outDir, 'while-disabled.png')), 20_000);
    assert.equal((await sharp(path.join(outDir, 'while-disabled.png')).metadata()).width, 30);
    assert.equal((await api(s, s.token, 'DELETE', `/api/v1/admin/watch-folders/${created.body.id}`)).status, 204);
  });
});

const PG = TEST_PG_URL;
const REDIS = TEST_REDIS_URL;

describe('watch folder delivery', () => {
  it('two outputs of one name delivered at once each keep their file; nothing of a copy is left behind', async () => {
    const out = path.join(tempDir('kiln-deliver-'), 'out');
    await mkdir(out, { recursive: true });
    await writeFile(path.join(out, 'photo.png'), 'there before');
    // Each copy takes a while, so all are under way before any is done (a look then a rename let them
    // all take photo-2.png, each replacing the one before).
    const copy = (text: string) => async (dest: string) => {
      await new Promise((r) => setTimeout(r, 50));
      await writeFile(dest, text);
    };
    const names = await Promise.all(['a', 'b', 'c'].map((t) => deliverInto(copy(t), out, 'photo.png')));
    assert.deepEqual(names.map((n) => path.basename(n)).sort(), ['photo-2.png', 'photo-3.png', 'photo-4.png']);
    const texts = await Promise.all(names.map((n) => readFile(n, 'utf8')));
    assert.deepEqual(texts.sort(), ['a', 'b', 'c']);
    assert.equal(await readFile(path.join(out, 'photo.png'), 'utf8'), 'there before');
    assert.deepEqual(readdirSync(out).sort(), ['photo-2.png', 'photo-3.png', 'photo-4.png', 'photo.png']);
  });
});

describe('watch folders with two instances (PostgreSQL + Redis)', { skip: await unavailable(PG, REDIS) }, () => {
  let a: TestServer;
  let b: TestServer;
  let db: Awaited<ReturnType<typeof pgSchema>> | undefined;
  const prefix = `kiln_t_${randomBytes(6).toString('hex')}`;
  let shared: string;
  // Before tempDir's removal, as in the suite above: both instances stop before their folder goes.
  after(async () => {
    await Promise.allSettled([a?.close(), b?.close()]);
    const { purgeRedisPrefix } = await import('../../daemon/queue/redis.js');
    await purgeRedisPrefix(REDIS, prefix).catch(() => {});
    await db?.drop();
    if (shared) await rm(shared, { recursive: true, force: true });
  });
  const dir = tempDir('kiln-wf2-');

  before(async () => {
    shared = mkdtempSync(path.join(process.env.KILN_TMP_DIR ?? tmpdir(), 'kiln-wf-shared-'));
    db = await pgSchema(PG);
    const env = {
      DATABASE_URL: db.url,
      REDIS_URL: REDIS,
      REDIS_PREFIX: prefix,
      SHARED_DIR: shared,
      ADMIN_PASSWORD: 'wf-' + randomBytes(8).toString('hex'),
    };
    a = await startServer({ generatePassword: true, env });
    b = await startServer({ generatePassword: true, env });
    a.token = await login(a.url, 'admin', env.ADMIN_PASSWORD);
    b.token = await login(b.url, 'admin', env.ADMIN_PASSWORD);
  });

  it('one instance watches the folder, each file is processed once, and the other takes over', async () => {
    const inDir = path.join(dir, 'in');
    const outDir = path.join(dir, 'out');
    await mkdir(inDir);
    const created = await api(a, a.token, 'POST', '/api/v1/admin/watch-folders', {
      path: inDir,
      outputPath: outDir,
      pipeline: resizeTo30,
      stableMs: 200,
    });
    assert.equal(created.status, 201, created.text);
    const id = created.body.id;
    await Promise.all([a.app.kiln.watchFolders.sync(), b.app.kiln.watchFolders.sync()]);
    const active = [a, b].filter((x) => x.app.kiln.watchFolders.status(id).active);
    assert.equal(active.length, 1, 'exactly one instance watches the folder');
    const one = await makeImage(dir, 'one.png', 60, 40);
    for (let i = 0; i < 6; i++) await copyFile(one, path.join(inDir, `f${i}.png`));
    await waitFor('six outputs', () => visible(outDir).length === 6);
    await sleep(1500);
    assert.equal(visible(outDir).length, 6, 'no file processed twice');
    const holder = active[0]!;
    const other = holder === a ? b : a;
    await holder.app.kiln.watchFolders.close();
    await other.app.kiln.watchFolders.sync();
    assert.equal(other.app.kiln.watchFolders.status(id).active, true, 'the other instance takes the folder');
    await copyFile(one, path.join(inDir, 'after.png'));
    await waitFor('the file that came after the handover', () => existsSync(path.join(outDir, 'after.png')));
  });
});
