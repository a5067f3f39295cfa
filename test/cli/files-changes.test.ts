/**
 * `kiln files add-version`, `restore` and `update`, on a server and on the local data dir: a new version
 * from a file, an older version made the newest again (its bytes), a rename and a share with the team;
 * wrong uses are refused with exit 2 before any request.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { kiln } from '../helpers/cli.js';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { createUser } from '../../daemon/store/users.js';
import { api, login, startServer, type TestServer } from '../helpers/server.js';

const dir = tempDir('kiln-files-changes-');

interface Line {
  id: string;
  name: string;
  latestVersion: number;
  scope?: string;
  version?: { version: number; source: string; restoredFrom: number | null };
}

/** The steps on one backend: `where` are the flags that choose it, `env` its environment. */
async function exercise(where: string[], env: Record<string, string>): Promise<string> {
  const run = async (args: string[]) => {
    const r = await kiln(['files', ...args, ...where, '--json'], { env });
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    return JSON.parse(r.stdout.trim().split('\n').at(-1)!) as Line;
  };
  const first = await makeImage(dir, `first-${where.length}.png`, 30, 20, { format: 'png' });
  const second = await makeImage(dir, `second-${where.length}.png`, 12, 8, { format: 'png' });
  const item = await run(['upload', first]);
  const v2 = await run(['add-version', item.id, second, '--name', 'smaller.png']);
  assert.equal(v2.latestVersion, 2);
  assert.equal(v2.version?.source, 'upload');
  const back = await run(['restore', item.id, '--ver', '1']);
  assert.equal(back.latestVersion, 3);
  assert.equal(back.version?.restoredFrom, 1);
  // The newest version has version 1's bytes.
  const out = path.join(dir, `got-${where.length}.png`);
  const got = await kiln(['files', 'get', item.id, '-o', out, ...where], { env });
  assert.equal(got.code, 0, got.stderr);
  assert.deepEqual(readFileSync(out), readFileSync(first));
  assert.equal((await sharp(out).metadata()).width, 30);
  const renamed = await run(['update', item.id, '--name', 'cover.png']);
  assert.equal(renamed.name, 'cover.png');

  // Usage errors exit 2; a directory given as the file is a bad input (3), as for `files upload`.
  for (const [args, code, message] of [
    [['restore', item.id], 2, /--ver N/],
    [['update', item.id], 2, /--name NEW-NAME and\/or --scope/],
    [['update', item.id, '--scope', 'everyone'], 2, /argument 'everyone' is invalid/],
    [['add-version', item.id, dir], 3, /not a regular file but a directory/],
  ] as const) {
    const r = await kiln(['files', ...args, ...where], { env });
    assert.equal(r.code, code, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message);
  }
  return item.id;
}

describe('kiln files add-version, restore, update', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(() => s.close());

  it('on a server, and shares an item with the team', async () => {
    const team = (await api(s, s.token, 'POST', '/api/v1/teams', { name: 'studio' })).body.team.id as string;
    await createUser(s.app.kiln.store.db, { username: 'carol', password: 'carol-password-1', role: 'user', teamId: team });
    const env = { XDG_CONFIG_HOME: path.join(dir, 'cfg'), KILN_API_KEY: await login(s.url, 'carol', 'carol-password-1'), KILN_SERVER: '' };
    const id = await exercise(['--server', s.url], env);
    const shared = await kiln(['files', 'update', id, '--scope', 'team', '--server', s.url, '--json'], { env });
    assert.equal(shared.code, 0, shared.stderr);
    assert.equal((JSON.parse(shared.stdout) as Line).scope, 'team');
    const seen = await api(s, s.token, 'GET', `/api/v1/files/${id}`);
    assert.equal(seen.body.name, 'cover.png');
    assert.equal(seen.body.scope, 'team');
  });

  it('on the local data dir', async () => {
    const env = { XDG_CONFIG_HOME: path.join(dir, 'cfg-local'), KILN_SERVER: '' };
    await exercise(['--local', '--data-dir', path.join(dir, 'data')], env);
  });
});
