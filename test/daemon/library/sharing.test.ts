/**
 * Teams that share (issue #22), against a real daemon: a `team` library item or pipeline is listed,
 * downloaded and run by the owner's teammates; a private one answers 404 to them; another team sees
 * nothing; only the owner and admins change the scope, add versions or delete (a teammate gets 403);
 * turning an item private again hides it. The core case runs on SQLite and, when it answers, PostgreSQL.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { createUser } from '../../../daemon/store/users.js';
import { EXIT } from '../../../src/core/errors.js';
import { kiln } from '../../helpers/cli.js';
import { makeImage, tempDir } from '../../helpers/fixtures.js';
import { pgUnavailable, TEST_PG_URL } from '../../helpers/scale.js';
import { api, filePart, form, login, startServer, type TestServer } from '../../helpers/server.js';

const dir = tempDir('kiln-share-');
const PG = TEST_PG_URL;

interface People {
  alice: string;
  bob: string;
  carol: string;
  dave: string;
  ids: Record<string, string>;
  teamA: string;
}

/** alice and bob in team A, carol in team B, dave in none. */
async function people(s: TestServer): Promise<People> {
  const teamA = (await api(s, s.token, 'POST', '/api/v1/teams', { name: 'studio' })).body.team.id as string;
  const teamB = (await api(s, s.token, 'POST', '/api/v1/teams', { name: 'lab' })).body.team.id as string;
  const db = s.app.kiln.store.db;
  const ids: Record<string, string> = {};
  const tokens: Record<string, string> = {};
  for (const [name, teamId] of [
    ['alice', teamA],
    ['bob', teamA],
    ['carol', teamB],
    ['dave', null],
  ] as const) {
    ids[name] = (await createUser(db, { username: name, password: `${name}-password-1`, role: 'user', teamId })).id;
    tokens[name] = await login(s.url, name, `${name}-password-1`);
  }
  return { alice: tokens.alice, bob: tokens.bob, carol: tokens.carol, dave: tokens.dave, ids, teamA };
}

async function upload(s: TestServer, token: string, file: string, scope?: string) {
  return api(s, token, 'POST', '/api/v1/files', await form({ file: await filePart(file), ...(scope ? { scope } : {}) }));
}

async function download(s: TestServer, token: string, p: string): Promise<{ status: number; buf: Buffer }> {
  const res = await fetch(s.url + p, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, buf: Buffer.from(await res.arrayBuffer()) };
}

const ids = (r: { body: { items?: { id: string }[]; pipelines?: { id: string }[] } }) =>
  (r.body.items ?? r.body.pipelines ?? []).map((i) => i.id).sort();

/**
 * The core case: bob downloads alice's team file and runs her team pipeline on it; her private file
 * and pipeline answer 404; carol (another team) sees nothing.
 */
async function teammatesShare(s: TestServer, p: People): Promise<{ shared: string; hidden: string; pipe: string }> {
  const png = await makeImage(dir, 'shared.png', 60, 30, { format: 'png' });
  const shared = await upload(s, p.alice, png, 'team');
  assert.equal(shared.status, 201, shared.text);
  assert.equal(shared.body.scope, 'team');
  const hidden = await upload(s, p.alice, await makeImage(dir, 'hidden.png', 20, 20, { format: 'png' }));
  assert.equal(hidden.body.scope, 'private');

  // bob lists and downloads the team item, byte for byte; the private one is not there (404, not 403).
  assert.deepEqual(ids(await api(s, p.bob, 'GET', '/api/v1/files')), [shared.body.id]);
  assert.deepEqual(ids(await api(s, p.bob, 'GET', '/api/v1/files?scope=team')), [shared.body.id]);
  assert.deepEqual(ids(await api(s, p.bob, 'GET', '/api/v1/files?scope=private')), []);
  const got = await download(s, p.bob, `/api/v1/files/${shared.body.id}/download`);
  assert.equal(got.status, 200);
  assert.deepEqual(got.buf, readFileSync(png));
  for (const path of [`/api/v1/files/${hidden.body.id}`, `/api/v1/files/${hidden.body.id}/download`]) {
    const r = await api(s, p.bob, 'GET', path);
    assert.equal(r.status, 404, r.text);
    assert.equal(r.body.error.code, 'NOT_FOUND');
  }
  // alice's own view: both, filtered by scope.
  assert.deepEqual(ids(await api(s, p.alice, 'GET', '/api/v1/files?scope=private')), [hidden.body.id]);
  assert.equal((await api(s, p.alice, 'GET', '/api/v1/files')).body.total, 2);

  const pipe = await api(s, p.alice, 'POST', '/api/v1/pipelines', {
    name: 'thumbs',
    scope: 'team',
    steps: [{ tool: 'resize', settings: { width: 12 } }],
  });
  assert.equal(pipe.status, 201, pipe.text);
  assert.equal(pipe.body.scope, 'team');
  const own = await api(s, p.alice, 'POST', '/api/v1/pipelines', { name: 'mine', steps: [{ tool: 'resize', settings: { width: 5 } }] });
  assert.equal(own.body.scope, 'private');
  assert.deepEqual(ids(await api(s, p.bob, 'GET', '/api/v1/pipelines')), [pipe.body.id]);
  assert.deepEqual(ids(await api(s, p.alice, 'GET', '/api/v1/pipelines?scope=private')), [own.body.id]);

  // bob runs the team pipeline (by id, and by its name) on the team file: the output is 12 px wide.
  for (const ref of [pipe.body.id, 'thumbs']) {
    const run = await api(s, p.bob, 'POST', `/api/v1/pipelines/${ref}/run`, await form({ fileId: shared.body.id }));
    assert.equal(run.status, 200, run.text);
    const out = await download(s, p.bob, run.body.downloadUrl);
    assert.equal((await sharp(out.buf).metadata()).width, 12);
  }
  for (const ref of [own.body.id, 'mine']) {
    const run = await api(s, p.bob, 'POST', `/api/v1/pipelines/${ref}/run`, await form({ fileId: shared.body.id }));
    assert.equal(run.status, 404, run.text);
  }
  const privateInput = await api(s, p.bob, 'POST', `/api/v1/pipelines/${pipe.body.id}/run`, await form({ fileId: hidden.body.id }));
  assert.equal(privateInput.status, 404, privateInput.text);

  // Another team sees nothing at all.
  assert.equal((await api(s, p.carol, 'GET', '/api/v1/files')).body.total, 0);
  assert.deepEqual((await api(s, p.carol, 'GET', '/api/v1/pipelines')).body.pipelines, []);
  assert.equal((await api(s, p.carol, 'GET', `/api/v1/files/${shared.body.id}/download`)).status, 404);
  assert.equal((await api(s, p.carol, 'GET', `/api/v1/pipelines/${pipe.body.id}`)).status, 404);
  const carolRun = await api(s, p.carol, 'POST', `/api/v1/pipelines/${pipe.body.id}/run`, await form({ fileId: shared.body.id }));
  assert.equal(carolRun.status, 404, carolRun.text);
  return { shared: shared.body.id, hidden: hidden.body.id, pipe: pipe.body.id };
}

describe('teams that share (SQLite)', () => {
  let s: TestServer;
  let p: People;
  let made: { shared: string; hidden: string; pipe: string };
  before(async () => {
    s = await startServer();
    p = await people(s);
  });
  after(() => s.close());

  it('lets teammates list, download and run team items; private ones and other teams answer 404', async () => {
    made = await teammatesShare(s, p);
  });

  it('uses a team item as a tool input, but saves no version of it for a teammate', async () => {
    const run = await api(s, p.bob, 'POST', '/api/v1/tools/image/resize', await form({ fileId: made.shared, settings: '{"width": 7}' }));
    assert.equal(run.status, 200, run.text);
    assert.equal(run.body.savedFileId, undefined);
    assert.equal(run.body.afterSuccessError.code, 'FORBIDDEN');
    assert.equal((await sharp((await download(s, p.bob, run.body.downloadUrl)).buf).metadata()).width, 7);
    assert.equal((await api(s, p.alice, 'GET', `/api/v1/files/${made.shared}`)).body.latestVersion, 1);
    const hidden = await api(s, p.bob, 'POST', '/api/v1/tools/image/resize', await form({ fileId: made.hidden, settings: '{"width": 7}' }));
    assert.equal(hidden.status, 404, hidden.text);
    // The owner's own run still saves a version.
    const owner = await api(
      s,
      p.alice,
      'POST',
      '/api/v1/tools/image/resize',
      await form({ fileId: made.shared, settings: '{"width": 9}' }),
    );
    assert.equal(owner.body.savedFileId, made.shared);
  });

  it('lets only the owner and admins change, share or delete (403 for a teammate, 404 for others)', async () => {
    const png = await makeImage(dir, 'v2.png', 10, 10, { format: 'png' });
    const tries: [string, string, unknown?][] = [
      ['PATCH', `/api/v1/files/${made.shared}`, { scope: 'private' }],
      ['PATCH', `/api/v1/files/${made.shared}`, { name: 'taken.png' }],
      ['POST', `/api/v1/files/${made.shared}/versions`, 'form'],
      ['POST', `/api/v1/files/${made.shared}/versions/1/restore`],
      ['DELETE', `/api/v1/files/${made.shared}/versions/1`],
      ['DELETE', `/api/v1/files/${made.shared}`],
      ['PATCH', `/api/v1/pipelines/${made.pipe}`, { scope: 'private' }],
      ['PUT', `/api/v1/pipelines/${made.pipe}`, { steps: [{ tool: 'resize', settings: { width: 2 } }] }],
      ['DELETE', `/api/v1/pipelines/${made.pipe}`],
    ];
    for (const [method, url, body] of tries) {
      const b = body === 'form' ? await form({ file: await filePart(png) }) : body;
      const bob = await api(s, p.bob, method, url, b);
      assert.equal(bob.status, 403, `bob ${method} ${url}: ${bob.text}`);
      assert.equal(bob.body.error.code, 'FORBIDDEN');
      const carol = await api(s, p.carol, method, url, body === 'form' ? await form({ file: await filePart(png) }) : body);
      assert.equal(carol.status, 404, `carol ${method} ${url}: ${carol.text}`);
    }
    // Nothing changed.
    const item = await api(s, p.alice, 'GET', `/api/v1/files/${made.shared}`);
    assert.equal(item.body.scope, 'team');
    assert.equal(item.body.versions.length, 2);
    assert.equal((await api(s, p.alice, 'GET', `/api/v1/pipelines/${made.pipe}`)).body.steps[0].settings.width, 12);

    // The owner turns both private: bob sees neither any more.
    const f = await api(s, p.alice, 'PATCH', `/api/v1/files/${made.shared}`, { scope: 'private' });
    assert.equal(f.status, 200, f.text);
    assert.equal(f.body.scope, 'private');
    const pl = await api(s, p.alice, 'PATCH', `/api/v1/pipelines/${made.pipe}`, { scope: 'private' });
    assert.equal(pl.body.scope, 'private');
    assert.equal((await api(s, p.bob, 'GET', `/api/v1/files/${made.shared}/download`)).status, 404);
    assert.equal((await api(s, p.bob, 'GET', '/api/v1/files')).body.total, 0);
    assert.equal((await api(s, p.bob, 'POST', `/api/v1/pipelines/${made.pipe}/run`, await form({ fileId: made.shared }))).status, 404);

    // An admin shares alice's private file; a PUT without scope keeps it; the admin deletes the pipeline.
    assert.equal((await api(s, s.token, 'PATCH', `/api/v1/files/${made.hidden}`, { scope: 'team' })).body.scope, 'team');
    assert.deepEqual(ids(await api(s, p.bob, 'GET', '/api/v1/files')), [made.hidden]);
    const put = await api(s, p.alice, 'PUT', `/api/v1/pipelines/${made.pipe}`, { steps: [{ tool: 'resize', settings: { width: 3 } }] });
    assert.equal(put.body.scope, 'private');
    assert.equal((await api(s, s.token, 'DELETE', `/api/v1/pipelines/${made.pipe}`)).status, 200);
  });

  it('refuses a bad scope and a team scope without a team, leaving no upload behind', async () => {
    const png = await makeImage(dir, 'lonely.png', 10, 10, { format: 'png' });
    const tmp = await s.app.kiln.library!.blobs.tmpDir();
    for (const [token, scope] of [
      [p.dave, 'team'],
      [p.alice, 'world'],
    ]) {
      const r = await upload(s, token, png, scope);
      assert.equal(r.status, 400, r.text);
      assert.equal(r.body.error.code, 'VALIDATION_ERROR');
      assert.match(r.body.error.message, /scope/);
    }
    assert.deepEqual(readdirSync(tmp), []);
    const pipe = await api(s, p.dave, 'POST', '/api/v1/pipelines', {
      name: 'solo',
      scope: 'team',
      steps: [{ tool: 'resize', settings: { width: 2 } }],
    });
    assert.equal(pipe.status, 400, pipe.text);
    assert.equal((await api(s, p.alice, 'GET', '/api/v1/files?scope=everyone')).status, 400);
    assert.equal((await api(s, p.alice, 'GET', '/api/v1/pipelines?scope=everyone')).status, 400);
    assert.equal((await api(s, p.alice, 'PATCH', `/api/v1/files/${made.hidden}`, {})).status, 400);
  });

  it('finds a team pipeline by name, and asks for the id when two teammates share one name', async () => {
    const db = s.app.kiln.store.db;
    await createUser(db, { username: 'erin', password: 'erin-password-1', role: 'user', teamId: p.teamA });
    const erin = await login(s.url, 'erin', 'erin-password-1');
    const dup = { name: 'dup', scope: 'team', steps: [{ tool: 'resize', settings: { width: 2 } }] };
    const a = await api(s, p.alice, 'POST', '/api/v1/pipelines', dup);
    assert.equal((await api(s, erin, 'GET', '/api/v1/pipelines/dup')).body.id, a.body.id);
    const b = await api(s, p.bob, 'POST', '/api/v1/pipelines', dup);
    assert.equal(b.status, 201, b.text);
    const both = await api(s, erin, 'GET', '/api/v1/pipelines/dup');
    assert.equal(both.status, 409, both.text);
    assert.equal(both.body.error.code, 'CONFLICT');
    // One's own name comes first; an admin's name lookup stays its own.
    assert.equal((await api(s, p.bob, 'GET', '/api/v1/pipelines/dup')).body.id, b.body.id);
    assert.equal((await api(s, s.token, 'GET', '/api/v1/pipelines/dup')).status, 404);
    assert.equal((await api(s, s.token, 'GET', `/api/v1/pipelines/${b.body.id}`)).status, 200);
  });

  it("counts a team's shared content once, in the usage of every member", async () => {
    const usage = await api(s, p.bob, 'GET', '/api/v1/files/usage');
    assert.equal(usage.body.usedBytes, 0);
    assert.equal(usage.body.team.id, p.teamA);
    const shared = (await api(s, p.alice, 'GET', '/api/v1/files?scope=team')).body.items as { size: number }[];
    assert.equal(shared.length, 1);
    assert.equal(usage.body.team.usedBytes, shared[0].size);
    assert.equal((await api(s, p.dave, 'GET', '/api/v1/files/usage')).body.team, undefined);
  });

  it("lets a watch folder run a team pipeline for a teammate, never someone else's private one", async () => {
    const team = await api(s, p.alice, 'POST', '/api/v1/pipelines', {
      name: 'folder-thumbs',
      scope: 'team',
      steps: [{ tool: 'resize', settings: { width: 4 } }],
    });
    const own = await api(s, p.alice, 'POST', '/api/v1/pipelines', {
      name: 'folder-own',
      steps: [{ tool: 'resize', settings: { width: 4 } }],
    });
    const folder = (name: string) => {
      const d = path.join(dir, name);
      mkdirSync(d, { recursive: true });
      return d;
    };
    const body = (pipelineId: string, ownerId: string, n: string) => ({
      path: folder(`in-${n}`),
      outputPath: path.join(dir, `out-${n}`),
      pipelineId,
      ownerId,
    });
    const ok = await api(s, s.token, 'POST', '/api/v1/admin/watch-folders', body(team.body.id, p.ids.bob, '1'));
    assert.equal(ok.status, 201, ok.text);
    assert.equal(ok.body.ownerId, p.ids.bob);
    for (const [pipelineId, owner, n] of [
      [own.body.id, p.ids.bob, '2'],
      [team.body.id, p.ids.carol, '3'],
    ]) {
      const r = await api(s, s.token, 'POST', '/api/v1/admin/watch-folders', body(pipelineId, owner, n));
      assert.equal(r.status, 400, r.text);
      assert.match(r.body.error.message, /may not run pipeline/);
    }
    assert.equal((await api(s, s.token, 'DELETE', `/api/v1/admin/watch-folders/${ok.body.id}`)).status, 204);
  });
});

describe('kiln files and kiln pipeline --scope', () => {
  let s: TestServer;
  let p: People;
  const env = async (token: string): Promise<NodeJS.ProcessEnv> => {
    const key = (await api(s, token, 'POST', '/api/v1/api-keys', { name: 'cli' })).body.key as string;
    return { KILN_SERVER: s.url, KILN_API_KEY: key, XDG_CONFIG_HOME: path.join(dir, 'cfg') };
  };
  before(async () => {
    s = await startServer();
    p = await people(s);
  });
  after(() => s.close());

  it('uploads and saves for the team, and a teammate lists them with --scope team', async () => {
    const alice = await env(p.alice);
    const bob = await env(p.bob);
    const png = await makeImage(dir, 'cli.png', 10, 10, { format: 'png' });
    const up = await kiln(['files', 'upload', png, '--scope', 'team', '--json'], { env: alice });
    assert.equal(up.code, 0, up.stderr);
    assert.equal(JSON.parse(up.stdout).scope, 'team');
    const priv = await kiln(['files', 'upload', png, '--json'], { env: alice });
    assert.equal(JSON.parse(priv.stdout).scope, 'private');
    const list = await kiln(['files', 'list', '--scope', 'team', '--json'], { env: bob });
    assert.equal(list.code, 0, list.stderr);
    assert.deepEqual(
      JSON.parse(list.stdout).items.map((i: { id: string }) => i.id),
      [JSON.parse(up.stdout).id],
    );

    const file = path.join(dir, 'cli-pipe.json');
    writeFileSync(file, JSON.stringify({ name: 'cli-pipe', steps: [{ tool: 'resize', settings: { width: 3 } }] }));
    const saved = await kiln(['pipeline', 'save', file, '--scope', 'team', '--json'], { env: alice });
    assert.equal(saved.code, 0, saved.stderr);
    assert.equal(JSON.parse(saved.stdout).scope, 'team');
    const pipes = await kiln(['pipeline', 'list', '--scope', 'team', '--json'], { env: bob });
    assert.deepEqual(
      JSON.parse(pipes.stdout).map((x: { name: string }) => x.name),
      ['cli-pipe'],
    );
    // Saving again (a replace) with --scope private hides it from bob.
    const again = await kiln(['pipeline', 'save', file, '--scope', 'private', '--json'], { env: alice });
    assert.equal(JSON.parse(again.stdout).id, JSON.parse(saved.stdout).id);
    assert.deepEqual(JSON.parse((await kiln(['pipeline', 'list', '--json'], { env: bob })).stdout), []);

    const bad = await kiln(['files', 'upload', png, '--scope', 'world'], { env: alice });
    assert.equal(bad.code, EXIT.USAGE, bad.stderr);
    assert.match(bad.stderr, /scope/);
  });
});

describe('teams that share (PostgreSQL)', { skip: await pgUnavailable(PG) }, () => {
  let s: TestServer;
  before(async () => {
    const was = process.env.KILN_TEST_PG;
    process.env.KILN_TEST_PG = PG;
    try {
      s = await startServer();
    } finally {
      if (was === undefined) delete process.env.KILN_TEST_PG;
      else process.env.KILN_TEST_PG = was;
    }
  });
  after(() => s?.close());

  it('lets teammates list, download and run team items; private ones and other teams answer 404', async () => {
    assert.match(String(s.config.databaseUrl ?? ''), /^postgres/);
    await teammatesShare(s, await people(s));
  });
});
