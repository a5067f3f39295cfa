/**
 * Live limits over real HTTP: PUT /api/v1/settings changes the upload limit for the next upload (no
 * restart), null goes back to the environment's value, a team's override applies to its members only,
 * another instance on the same database sees a change (limits and the sync window), and bad values are
 * refused.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { tempDir } from '../helpers/fixtures.js';
import { filePart, form, login, startServer, type TestServer } from '../helpers/server.js';
import { call, STRONG } from './accounts/http.js';

const dir = tempDir();

/** A PNG of noise, about 1.5 MB: over a 1 MB upload limit, under 2 MB. */
async function noisyPng(): Promise<string> {
  const p = path.join(dir, 'noise.png');
  await sharp(randomBytes(720 * 720 * 3), { raw: { width: 720, height: 720, channels: 3 } })
    .png({ compressionLevel: 0 })
    .toFile(p);
  return p;
}

describe('live limits', () => {
  let s: TestServer;
  let png: string;
  before(async () => {
    s = await startServer({ env: { MAX_UPLOAD_MB: '1' } });
    png = await noisyPng();
  });
  after(() => s.close());

  const upload = async (token = s.token) =>
    call(s, 'POST', '/api/v1/tools/image/resize', { token, form: await form({ file: await filePart(png), settings: '{"width": 16}' }) });

  it('applies a changed maxUploadMb to the next upload, and null goes back to MAX_UPLOAD_MB', async () => {
    const first = await upload();
    assert.equal(first.status, 413, JSON.stringify(first.json));
    assert.match(first.json.error.message, /1 MB/);
    const put = await call(s, 'PUT', '/api/v1/settings', { body: { maxUploadMb: 2 } });
    assert.equal(put.status, 200, JSON.stringify(put.json));
    assert.equal(put.json.settings.maxUploadMb, 2);
    const second = await upload();
    assert.equal(second.status, 200, JSON.stringify(second.json));
    const reset = await call(s, 'PUT', '/api/v1/settings', { body: { maxUploadMb: null } });
    assert.equal(reset.json.settings.maxUploadMb, 1);
    assert.equal((await upload()).status, 413);
    const audit = await call(s, 'GET', '/api/v1/admin/audit?event=settings.update');
    assert.ok(
      audit.json.events.some((e: { details: { changed?: string[] } }) => e.details.changed?.includes('maxUploadMb')),
      'the change is audited',
    );
  });

  it('words a library upload over the limit as a tool upload: the setting, then MAX_UPLOAD_MB', async () => {
    const tool = await upload();
    const lib = await call(s, 'POST', '/api/v1/files', { form: await form({ file: await filePart(png) }) });
    assert.equal(lib.status, 413, JSON.stringify(lib.json));
    assert.equal(lib.json.error.message, tool.json.error.message);
  });

  it('applies a team override to its members only (upload size and rate)', async () => {
    const team = await call(s, 'POST', '/api/v1/teams', { body: { name: 'studio' } });
    assert.equal(team.status, 201);
    const teamId = team.json.team.id as string;
    const user = async (username: string, withTeam: boolean) => {
      const r = await call(s, 'POST', '/api/auth/register', {
        body: { username, password: STRONG, role: 'user', ...(withTeam ? { team: teamId } : {}) },
      });
      assert.equal(r.status, 201, JSON.stringify(r.json));
      return (await call(s, 'POST', '/api/auth/login', { token: null, body: { username, password: STRONG } })).json.token as string;
    };
    const member = await user('member', true);
    const outsider = await user('outsider', false);
    const set = await call(s, 'PUT', `/api/v1/teams/${teamId}/limits`, { body: { maxUploadMb: 2, rateLimitPerMinute: 1000 } });
    assert.equal(set.status, 200, JSON.stringify(set.json));
    assert.deepEqual(set.json.limits, { maxUploadMb: 2, rateLimitPerMinute: 1000 });
    assert.equal(set.json.effective.maxUploadMb, 2);
    assert.equal(set.json.effective.userQuotaMb, s.config.userQuotaMb, 'what the team does not set follows the server');
    assert.equal((await upload(member)).status, 200);
    assert.equal((await upload(outsider)).status, 413);

    // A rate of 2 a minute for the team: the member's third request is refused, the outsider goes on.
    await call(s, 'PUT', `/api/v1/teams/${teamId}/limits`, { body: { rateLimitPerMinute: 2 } });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await call(s, 'GET', '/api/v1/jobs', { token: member })).status);
    assert.deepEqual(statuses, [200, 200, 429]);
    for (let i = 0; i < 3; i++) assert.equal((await call(s, 'GET', '/api/v1/jobs', { token: outsider })).status, 200);
    const cleared = await call(s, 'PUT', `/api/v1/teams/${teamId}/limits`, { body: { rateLimitPerMinute: null, maxUploadMb: null } });
    assert.deepEqual(cleared.json.limits, {});
    assert.equal((await call(s, 'GET', `/api/v1/teams/${teamId}/limits`)).json.effective.maxUploadMb, 1);

    assert.equal((await call(s, 'GET', `/api/v1/teams/${teamId}/limits`, { token: outsider })).status, 403);
    assert.equal((await call(s, 'PUT', `/api/v1/teams/${'f'.repeat(24)}/limits`, { body: { maxUploadMb: 3 } })).status, 404);
  });

  it('refuses bad values with VALIDATION_ERROR', async () => {
    for (const body of [
      { maxUploadMb: -1 },
      { userQuotaMb: 'lots' },
      { rateLimitPerMinute: 1.5 },
      { sweepIntervalS: 1 },
      { outputTtlHours: 48, jobRecordTtlHours: 24 },
      { jobTtlHours: 2, outputTtlHours: 3 },
    ]) {
      const r = await call(s, 'PUT', '/api/v1/settings', { body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.json.error.code, 'VALIDATION_ERROR');
    }
    const team = (await call(s, 'GET', '/api/v1/teams')).json.teams[0].id;
    const r = await call(s, 'PUT', `/api/v1/teams/${team}/limits`, { body: { outputTtlHours: 1 } });
    assert.equal(r.status, 400, 'TTLs are server-wide');
  });

  it('sweeps at the live sweepIntervalS', async () => {
    const jobs = s.app.kiln.jobs;
    const t0 = Date.now() + 1_000_000;
    assert.notEqual(await jobs.sweepIfDue(t0), null, 'the first tick sweeps');
    assert.equal(await jobs.sweepIfDue(t0 + 60_000), null, 'not due within the default 600 s');
    await call(s, 'PUT', '/api/v1/settings', { body: { sweepIntervalS: 30 } });
    assert.notEqual(await jobs.sweepIfDue(t0 + 60_000), null, 'due after a changed interval');
    await call(s, 'PUT', '/api/v1/settings', { body: { sweepIntervalS: null } });
  });
});

describe('live limits on two instances of one database', () => {
  it('a change made on one instance applies on the other within a few seconds', async () => {
    const a = await startServer({ env: { MAX_UPLOAD_MB: '1' } });
    let b: TestServer | undefined;
    try {
      // A second daemon on the same data dir: the same SQLite database, as instances share PostgreSQL.
      b = await startServer({ dataDir: a.dataDir, generatePassword: true, env: { MAX_UPLOAD_MB: '1', ADMIN_PASSWORD: a.adminPassword } });
      const token = await login(b.url, 'admin', a.adminPassword);
      const png = await noisyPng();
      const upload = async () =>
        call(b!, 'POST', '/api/v1/tools/image/resize', {
          token,
          form: await form({ file: await filePart(png), settings: '{"width": 16}' }),
        });
      assert.equal((await upload()).status, 413);
      assert.equal((await call(a, 'PUT', '/api/v1/settings', { body: { maxUploadMb: 2 } })).status, 200);
      let status = 0;
      for (let i = 0; i < 40 && status !== 200; i++) {
        await new Promise((r) => setTimeout(r, 250));
        status = (await upload()).status;
      }
      assert.equal(status, 200, 'instance B applies the limit set on A');
      // The sync window too: 0 on A, and B answers its next run with a 202.
      assert.equal((await call(a, 'PUT', '/api/v1/settings', { body: { syncWindowMs: 0 } })).status, 200);
      await new Promise((r) => setTimeout(r, 2100));
      const small = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#123456' } })
        .png()
        .toBuffer();
      const run = await call(b, 'POST', '/api/v1/tools/image/resize', {
        token,
        form: await form({ file: new File([small], 's.png'), settings: '{"width": 4}' }),
      });
      assert.equal(run.status, 202, JSON.stringify(run.json));
    } finally {
      await b?.app.close();
      await a.close();
    }
  });
});
